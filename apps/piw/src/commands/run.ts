import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { followRun } from "../follow-run.js";
import { HELP_OPTION, parseCommandLine } from "../parse-command-line.js";
import { preflight, reserveParams } from "../preflight.js";
import { COMMAND_USAGE } from "../usage.js";
import { savedValue } from "./run-arguments.js";

const OPTIONS = {
  ...HELP_OPTION,
  "input-json": { type: "string" },
  detach: { type: "boolean" },
} as const;

/** `piw run`: preflight, reserve (origin cli), then follow. */
export async function runCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("run", args, OPTIONS);
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

  // Nothing reaches the host until the workflow compiled and the input checked out.
  const prepared = await preflight({ ref, cwd: ctx.io.cwd, words, inputJson }, ctx.io.env);
  for (const note of prepared.notes) ctx.warn(`piw: ${note}`);

  const host = await ctx.host();
  const reserved = savedValue(
    await host.call("runs.reserve", reserveParams(prepared, ctx.io.cwd)),
    prepared.workflowName,
  );
  const title = prepared.title;
  ctx.print(
    `${ctx.style.bold(prepared.workflowName)}${title === undefined ? "" : ` (${title})`}  ${ctx.style.dim(`run ${reserved.runId}`)}`,
  );
  if (values.detach) {
    ctx.print(`follow it with: piw status ${reserved.runId}`);
    return ExitCode.ok;
  }
  return followRun(ctx, host, reserved.runId);
}
