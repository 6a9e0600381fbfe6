import type { CliContext } from "../cli-context.js";
import { agentCostLines, agentSessions, stepTranscriptLines } from "@piw/viewer";
import { CliError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { statusOutput } from "../output-schemas.js";
import { renderRunStatus } from "../render-run.js";
import { COMMAND_USAGE } from "../usage.js";
import { runIdArgument } from "./run-arguments.js";

/** `piw status <runId>`. */
export async function statusCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("status", args, COMMAND_TABLE.status.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.status);
    return ExitCode.ok;
  }
  const runId = runIdArgument("status", positionals);
  const host = await ctx.host();
  const view = await host.call("runs.get", { runId });
  if (view === null) throw new CliError(`no run ${runId}`);
  if (values.step !== undefined) {
    const step = values.step;
    if (!view.nodes.some((node) => node.path === step))
      throw new CliError(`run ${runId} has no step ${step}`);
    const history = await host.call("runs.history", { runId });
    if (history === null) throw new CliError(`no run ${runId}`);
    if (values.json) ctx.printJson(agentSessions(history, step));
    else for (const line of stepTranscriptLines(history, step)) ctx.print(line);
    return ExitCode.ok;
  }
  if (values.json) ctx.printJson(statusOutput(view));
  else {
    for (const line of renderRunStatus(view, ctx.style)) ctx.print(line);
    // What isolated agent steps cost; only a run with agent steps is asked for its history.
    const history = view.nodes.some((node) => node.kind === "agent")
      ? await host.call("runs.history", { runId })
      : null;
    for (const line of history ? agentCostLines(history) : []) ctx.print(line);
  }
  return ExitCode.ok;
}
