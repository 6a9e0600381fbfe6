import type { CallParams, HostConnection } from "@piw/client";
import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { followOrDetach } from "../follow-or-detach.js";
import type { FollowStart } from "../follow-run.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { type PreparedRun, preflight, reserveParams } from "../preflight.js";
import { runTitleLine } from "../render-run.js";
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
  const params = reserveParams(prepared, { cwd: ctx.io.cwd, env: ctx.io.env, budget });
  return reserveAndFollow(ctx, host, prepared, params, {
    json: values.json === true,
    detach: values.detach === true,
  });
}

export interface ReserveFollowOptions {
  json: boolean;
  detach: boolean;
  /** The run's title line is on stdout already (the quick route printed it). */
  titleShown?: boolean;
  /** Where following starts, when the quick route followed the run until now. */
  start?: FollowStart;
}

/**
 * Reserve a prepared run, then follow it (or not, with --detach). A resend with the same `requestKey`
 * adopts the run saved by the first (`lostReplyPolicy`), so the quick route hands its reserve here.
 */
export async function reserveAndFollow(
  ctx: CliContext,
  host: HostConnection,
  prepared: PreparedRun,
  params: CallParams<"runs.reserve">,
  options: ReserveFollowOptions,
): Promise<ExitCode> {
  const { json, detach } = options;
  const runId = savedValue(await host.call("runs.reserve", params), prepared.workflowName).runId;
  if (detach && !json && ctx.io.stdout.isTTY !== true) {
    // A script reads the run ID alone from stdout; the hint is for whoever watches stderr.
    ctx.print(runId);
    ctx.warn(`follow it with: piw status ${runId}`);
    return ExitCode.ok;
  }
  if (!json) {
    if (options.titleShown !== true) ctx.print(runTitleLine(ctx.style, prepared, runId));
    if (detach) ctx.print(`follow it with: piw status ${runId}`);
  }
  return followOrDetach(ctx, host, {
    command: "run",
    runId,
    fromRunId: null,
    detach,
    json,
    ...(options.start === undefined ? {} : { start: options.start }),
  });
}
