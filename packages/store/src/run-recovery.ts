import {
  adopted,
  applied,
  conflict,
  type Fence,
  type RecoveryReason,
  type RunRecord,
  type Transition,
} from "@piw/protocol";
import { canonicalJson, clockDueAt, isClockReason, WAKE_LEAD_MS } from "@piw/protocol";
import { dueAfter, scheduleVisit } from "./clock.js";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import { stopOpenVisits } from "./deadline-clock.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { invalidTransition, transitionRun, updateRun } from "./run-writes.js";
import { terminalize } from "./terminalize.js";
import { decideWorkerExit, type WorkerExitVerdict } from "./worker-exit-decision.js";

function sameReason(a: string | null, b: RecoveryReason): boolean {
  return a !== null && a === canonicalJson(b);
}

/** running -> parked with a reason; releases the claim. */
export function parkRun(ctx: StoreContext, fence: Fence, reason: RecoveryReason): Transition<RunRecord> {
  return ctx.tx(() => {
    const current = ctx.getRunRow(fence.runId);
    if (
      current?.status === "parked" &&
      current.generation === fence.generation + 1 &&
      sameReason(current.recovery_reason, reason)
    ) {
      return adopted(mapRunRow(current));
    }
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    // A worker parks only a run it accepted; `starting -> parked` is the host's verdict on a lost launch.
    if (row.status !== "running") return conflict(invalidTransition(row, "parked"));
    if (isClockReason(reason)) {
      const scheduled = scheduleVisit(ctx, row, reason);
      if (scheduled) return conflict(scheduled);
    }
    parkRow(ctx, row, reason);
    return applied(mapRunRow(row));
  });
}

/**
 * Save an open visit's wait or retry schedule without parking the run: a parallel branch that will
 * park on the clock records its own due time at once, while the other branches go on; the run parks
 * later, for the earliest of them. Refused for any other reason and for a run that is not running.
 */
export function scheduleOpenVisit(
  ctx: StoreContext,
  fence: Fence,
  reason: RecoveryReason,
): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status !== "running") return conflict(notRunning(row));
    if (!isClockReason(reason)) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "a wait or retry reason",
        actual: reason.code,
      });
    }
    const scheduled = scheduleVisit(ctx, row, reason);
    return scheduled ? conflict(scheduled) : applied(mapRunRow(row));
  });
}

/**
 * When the clock wakes a run whose worker it launched early and lost: at its due time, and no sooner
 * than a lead from now, so that it is claimable at once yet later than every time the host's clock
 * has already tried (the clock skips those, see WakeClock).
 */
function rewakeAt(ctx: StoreContext, run: RunRow, launchId: string): number | null {
  const launch = ctx.stmt("SELECT started_at FROM worker_launches WHERE launch_id = ?").get(launchId) as
    | { started_at: number }
    | undefined;
  const due = launch === undefined ? null : dueAfter(ctx, run.run_id, launch.started_at);
  return due === null ? null : Math.max(due, ctx.now() + WAKE_LEAD_MS);
}

/**
 * The park write, shared by explicit parks, pauses at a node boundary and worker-loss recovery. The
 * open visits' deadline clocks stop at `stoppedAt`: now, or when a lost worker was last known alive.
 */
export function parkRow(
  ctx: StoreContext,
  row: RunRow,
  reason: RecoveryReason,
  wakeAt: number | null = clockDueAt(reason),
  stoppedAt: number = ctx.now(),
): void {
  stopOpenVisits(ctx, row.run_id, stoppedAt);
  // A wait or retry pause keeps a pause asked for while its node ran (the clock skips a paused run), and
  // so does a lost worker's relaunch (the new worker then parks at the first node boundary it reaches).
  const kept = isClockReason(reason) || wakeAt !== null || reason.code === "worker_lost";
  transitionRun(
    ctx,
    row,
    "parked",
    {
      claim_token: null,
      lease_expires_at: null,
      generation: row.generation + 1,
      recovery_reason: canonicalJson(reason),
      paused: reason.code === "paused" || (kept && row.paused === 1) ? 1 : 0,
      wake_at: wakeAt,
    },
    { type: "run.parked", data: { reason: reason.code } },
  );
  ctx
    .stmt("UPDATE turns SET status = 'lost', ended_at = ? WHERE run_id = ? AND status = 'open'")
    .run(ctx.now(), row.run_id);
}

/** Ask a running or starting run to pause; the worker parks it at the next node boundary. */
export function requestPause(ctx: StoreContext, req: { runId: string }): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.paused === 1) return adopted(mapRunRow(row));
    // A run parked on the clock pauses where it is: the clock skips it until an explicit resume.
    if (row.status === "parked" && row.wake_at !== null) {
      updateRun(ctx, row, { paused: 1 }, { type: "run.pause_requested" });
      return applied(mapRunRow(row));
    }
    if (row.status !== "running" && row.status !== "starting") {
      return conflict(notRunning(row));
    }
    updateRun(ctx, row, { paused: 1 }, { type: "run.pause_requested" });
    return applied(mapRunRow(row));
  });
}

/**
 * A `starting` run whose lease expired with no worker launched for it: whoever claimed it died with its
 * host. Judged by the same rule as a lost worker: a command that never ran returns to `queued` (the
 * never-ran rule), a resume of saved state parks with its reason (the progress rule).
 */
export function recoverExpiredStarting(ctx: StoreContext, req: { runId: string }): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.status !== "starting") {
      return conflict(invalidTransition(row, "queued"));
    }
    if (row.lease_expires_at !== null && row.lease_expires_at > ctx.now()) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "lease expired",
        actual: "lease live",
      });
    }
    const verdict = decideWorkerExit({
      command: row.next_command,
      progressSinceLaunch: false,
      report: { kind: "none" },
      runStatus: "starting",
      hostAlive: false,
      lostAgentAttempts: null,
    });
    applyWorkerExitVerdict(ctx, row, verdict, null);
    return applied(mapRunRow(row));
  });
}

/**
 * The writes a verdict implies for a run that still holds the claim it judges: that of a recorded
 * launch, or (`launchId` null) an expired claim no launch was recorded for.
 */
export function applyWorkerExitVerdict(
  ctx: StoreContext,
  run: RunRow,
  verdict: WorkerExitVerdict,
  launchId: string | null,
  stoppedAt: number = ctx.now(),
): void {
  const launch = launchId === null ? {} : { launchId };
  switch (verdict.kind) {
    case "record_only":
      return;
    case "fail":
      terminalize(
        ctx,
        run,
        { status: "failed", outcome: "failed", error: verdict.error, present: true },
        { type: "run.failed", data: { code: verdict.error.code, ...launch } },
      );
      return;
    case "requeue":
      // Nothing ran and the claim's holder is provably dead: the never-ran rule's `starting -> queued`.
      transitionRun(
        ctx,
        run,
        "queued",
        { claim_token: null, lease_expires_at: null, generation: run.generation + 1 },
        launchId === null ? { type: "run.lease_expired" } : { type: "run.requeued", data: { launchId } },
      );
      return;
    case "relaunch":
      // Progress is measured from a recorded launch, so a relaunch always has one.
      if (launchId === null) throw new Error("A relaunch verdict needs the launch it follows.");
      parkRow(ctx, run, { ...verdict.reason, launchId }, null, stoppedAt);
      return;
    case "park":
      // A worker the clock launched within the wake lead, lost before its wait or retry was due: the
      // clock wakes the run again (at once if that time has passed). Any other lost worker parks.
      parkRow(
        ctx,
        run,
        { ...verdict.reason, ...launch },
        launchId === null ? null : rewakeAt(ctx, run, launchId),
        stoppedAt,
      );
      return;
    default:
      verdict satisfies never;
  }
}
