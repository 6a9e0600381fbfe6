import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { listOutput } from "../output-schemas.js";
import { renderRunList } from "../render-list.js";
import { parseStateFilter } from "../state-filter.js";
import { COMMAND_USAGE } from "../usage.js";

/** `piw list`. */
export async function listCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("list", args, COMMAND_TABLE.list.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.list);
    return ExitCode.ok;
  }
  if (positionals.length > 0)
    throw usageError(`unexpected argument ${JSON.stringify(positionals[0])}`, "list");
  const { statuses, outcomes } = parseStateFilter(values.status ?? [], "list");
  const limit = parseLimit(values.limit);
  const host = await ctx.host();
  const runs = await host.call("runs.list", {
    ...(statuses.length > 0 ? { statuses } : {}),
    ...(values.schedule === undefined ? {} : { scheduleId: values.schedule }),
    ...(outcomes.length > 0 ? { outcomes } : {}),
    limit,
  });
  if (values.json) ctx.printJson(listOutput(runs));
  else for (const line of renderRunList(runs, ctx.style)) ctx.print(line);
  return ExitCode.ok;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 50;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw usageError("--limit takes a whole number from 1 to 1000", "list");
  }
  return limit;
}
