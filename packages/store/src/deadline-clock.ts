import type { StoreContext } from "./context.js";
import type { LaunchRow, RunRow, StepRow } from "./rows.js";

// A visit's deadline bounds the work of the visit: its clock runs only while a worker executes the visit
// (a held conversation step included: its worker waits on the turn). It stands still while the run is
// parked, waits for a resume, or has no live worker. The store owns the rule: a stop marks the open
// visits with when execution stopped, and a reopen moves the deadline on by the time it stood still.

/**
 * Mark the run's open visits stopped at `stoppedAt`, in the caller's transaction. A visit already
 * stopped keeps its earlier time (a resume whose worker was lost before it reopened the visit ran
 * none of it), and a visit never stops before its attempt started.
 */
export function stopOpenVisits(ctx: StoreContext, runId: string, stoppedAt: number): void {
  ctx
    .stmt(
      `UPDATE run_steps SET stopped_at = MAX(started_at, ?)
        WHERE run_id = ? AND status = 'running' AND stopped_at IS NULL`,
    )
    .run(stoppedAt, runId);
}

/** The deadline a visit reopened at `now` runs to: its saved one, moved on by the time it stood still. */
export function resumedDeadline(
  step: Pick<StepRow, "deadline_at" | "stopped_at">,
  now: number,
): number | null {
  if (step.deadline_at === null) return null;
  const stood = step.stopped_at === null ? 0 : Math.max(0, now - step.stopped_at);
  return step.deadline_at + stood;
}

/**
 * The best known time a lost launch's worker was last alive, for a host that died with it: the latest
 * of its launch, the host's last heartbeat for it, and the run's last saved change (which that worker
 * made, as the run still holds the launch's claim). Workers exit within about a second of losing their
 * host, so the truth is at most one heartbeat interval and that second later.
 */
export function lastAliveAt(
  launch: Pick<LaunchRow, "started_at" | "alive_at">,
  run: Pick<RunRow, "updated_at">,
): number {
  return Math.max(launch.started_at, launch.alive_at ?? launch.started_at, run.updated_at);
}

/**
 * The host's heartbeat: its workers of these launches are alive now. Not a run change (no revision, no
 * event); a launch that already ended is left as it is.
 */
export function markLaunchesAlive(ctx: StoreContext, launchIds: readonly string[]): void {
  if (launchIds.length === 0) return;
  const mark = ctx.stmt(
    "UPDATE worker_launches SET alive_at = ? WHERE launch_id = ? AND exit_decision IS NULL",
  );
  ctx.tx(() => {
    const now = ctx.now();
    for (const id of launchIds) mark.run(now, id);
  });
}
