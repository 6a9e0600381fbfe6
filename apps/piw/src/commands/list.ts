import { type RunStatus, runStatusSchema } from "@piw/protocol";
import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { HELP_OPTION, JSON_OPTION, parseCommandLine } from "../parse-command-line.js";
import { renderRunList } from "../render-list.js";
import { COMMAND_USAGE } from "../usage.js";

const LIST_OPTIONS = {
  ...HELP_OPTION,
  ...JSON_OPTION,
  status: { type: "string", multiple: true },
  limit: { type: "string" },
} as const;

/** `piw list`. */
export async function listCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("list", args, LIST_OPTIONS);
  if (values.help) {
    ctx.print(COMMAND_USAGE.list);
    return ExitCode.ok;
  }
  if (positionals.length > 0)
    throw usageError(`unexpected argument ${JSON.stringify(positionals[0])}`, "list");
  const statuses = parseStatuses(values.status ?? []);
  const limit = parseLimit(values.limit);
  const host = await ctx.host();
  const runs = await host.call("runs.list", { ...(statuses.length > 0 ? { statuses } : {}), limit });
  if (values.json) ctx.printJson(runs);
  else for (const line of renderRunList(runs, ctx.style)) ctx.print(line);
  return ExitCode.ok;
}

function parseStatuses(raw: readonly string[]): RunStatus[] {
  const statuses: RunStatus[] = [];
  for (const word of raw.flatMap((s) => s.split(",")).map((s) => s.trim())) {
    if (word === "") continue;
    const parsed = runStatusSchema.safeParse(word);
    if (!parsed.success) {
      throw usageError(
        `unknown status ${JSON.stringify(word)}; use ${runStatusSchema.options.join(", ")}`,
        "list",
      );
    }
    if (!statuses.includes(parsed.data)) statuses.push(parsed.data);
  }
  return statuses;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 50;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw usageError("--limit takes a whole number from 1 to 1000", "list");
  }
  return limit;
}
