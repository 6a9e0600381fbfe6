import type { HostConnection } from "@piw/client";
import type { CliContext } from "./cli-context.js";
import { ExitCode } from "./exit-codes.js";
import { type FollowStart, followRun, followRunResult } from "./follow-run.js";
import { type FollowedCommand, followedOutput } from "./output-schemas.js";
import { runStateText } from "./render-words.js";

export interface FollowRequest {
  command: FollowedCommand;
  runId: string;
  /** The run this one continues, restarts or is (`resume`): null for a new run. */
  fromRunId: string | null;
  detach: boolean;
  json: boolean;
  /** Where following starts (see FollowStart); none: from the run's first view. */
  start?: FollowStart;
}

/**
 * The end of every command that starts or resumes a run: follow it, or not with --detach; with
 * --json, one object on stdout (the run's last view and the exit code) instead of the node lines.
 */
export async function followOrDetach(
  ctx: CliContext,
  host: HostConnection,
  request: FollowRequest,
): Promise<ExitCode> {
  const { command, runId, fromRunId, detach, json } = request;
  if (detach) {
    if (json) {
      const fields = { runId, fromRunId, detached: true, state: null, exitCode: ExitCode.ok, view: null };
      ctx.printJson(followedOutput(command, fields));
    }
    return ExitCode.ok;
  }
  if (!json) return followRun(ctx, host, runId, request.start);
  const { code, view } = await followRunResult(ctx, host, runId, true, request.start);
  ctx.printJson(
    followedOutput(command, {
      runId,
      fromRunId,
      detached: false,
      state: view === undefined ? null : runStateText(view),
      exitCode: code,
      view: view ?? null,
    }),
  );
  return code;
}
