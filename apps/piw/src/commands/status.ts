import type { CliContext } from "../cli-context.js";
import { CliError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { HELP_OPTION, JSON_OPTION, parseCommandLine } from "../parse-command-line.js";
import { renderRunStatus } from "../render-run.js";
import { COMMAND_USAGE } from "../usage.js";
import { runIdArgument } from "./run-arguments.js";

const STATUS_OPTIONS = { ...HELP_OPTION, ...JSON_OPTION } as const;

/** `piw status <runId>`. */
export async function statusCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("status", args, STATUS_OPTIONS);
  if (values.help) {
    ctx.print(COMMAND_USAGE.status);
    return ExitCode.ok;
  }
  const runId = runIdArgument("status", positionals);
  const host = await ctx.host();
  const view = await host.call("runs.get", { runId });
  if (view === null) throw new CliError(`no run ${runId}`);
  if (values.json) ctx.printJson(view);
  else for (const line of renderRunStatus(view, ctx.style)) ctx.print(line);
  return ExitCode.ok;
}
