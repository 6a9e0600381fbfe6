import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { followOrDetach } from "../follow-or-detach.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { preflight, reserveParams } from "../preflight.js";
import { COMMAND_USAGE } from "../usage.js";
import { budgetOption, savedValue } from "./run-arguments.js";

/** `piw run`: preflight, reserve (origin cli), then follow. */
export async function runCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("run", args, COMMAND_TABLE.run.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.run);
    return ExitCode.ok;
  }
  const [ref, ...words] = positionals;
  if (ref === undefined) throw usageError("piw run needs a workflow name or path", "run");
  const inputJson = values["input-json"];
  if (inputJson !== undefined && words.length > 0) {
    throw usageError("give the input as task words or with --input-json, not both", "run");
  }

  const budget = budgetOption(values.budget, "run");
  // Nothing reaches the host until the workflow compiled and the input checked out.
  const prepared = await preflight({ ref, cwd: ctx.io.cwd, words, inputJson }, ctx.io.env);
  for (const note of prepared.notes) ctx.warn(`piw: ${note}`);

  const host = await ctx.host({ launching: true });
  const reserved = savedValue(
    await host.call("runs.reserve", reserveParams(prepared, { cwd: ctx.io.cwd, env: ctx.io.env, budget })),
    prepared.workflowName,
  );
  const runId = reserved.runId;
  const json = values.json === true;
  const detach = values.detach === true;
  if (detach && !json && ctx.io.stdout.isTTY !== true) {
    // A script reads the run ID alone from stdout; the hint is for whoever watches stderr.
    ctx.print(runId);
    ctx.warn(`follow it with: piw status ${runId}`);
    return ExitCode.ok;
  }
  if (!json) {
    const title = prepared.title;
    ctx.print(
      `${ctx.style.bold(prepared.workflowName)}${title === undefined ? "" : ` (${title})`}  ${ctx.style.dim(`run ${runId}`)}`,
    );
    if (detach) ctx.print(`follow it with: piw status ${runId}`);
  }
  return followOrDetach(ctx, host, { command: "run", runId, fromRunId: null, detach, json });
}
