import { type ClockReason, type Conflict, WAKE_LEAD_MS } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import type { RunRow } from "./rows.js";

// The durable clock: a parked run's `wake_at` (indexed by `runs_wake`, paused runs left out) says when
// the host wakes it; the open visit's `due_at` says when its wait or next attempt may go on, so a run
// woken early (an explicit resume) parks again for what is left.

/**
 * Save a clock park's visit side, in the caller's transaction: the visit must be open. A retry pause
 * also records the failed attempt, gives the next attempt a fresh deadline from its due time, and
 * drops the visit's failed effects so that the next attempt runs them again (settled ones are adopted).
 */
export function scheduleVisit(ctx: StoreContext, row: RunRow, reason: ClockReason): Conflict | null {
  const step = ctx
    .stmt("SELECT status FROM run_steps WHERE run_id = ? AND path = ? AND visit = ?")
    .get(row.run_id, reason.path, reason.visit) as { status: string } | undefined;
  if (step?.status !== "running") {
    return { kind: "visit_not_open", runId: row.run_id, path: reason.path, visit: reason.visit };
  }
  if (reason.code === "waiting") {
    ctx
      .stmt("UPDATE run_steps SET due_at = ? WHERE run_id = ? AND path = ? AND visit = ?")
      .run(reason.until, row.run_id, reason.path, reason.visit);
    return null;
  }
  // The next attempt's deadline is a fresh one, whose clock stands still until the attempt is due: a
  // reopen later than that moves it on by the delay (deadline-clock.ts).
  ctx
    .stmt(
      `UPDATE run_steps SET due_at = ?, failed_attempts = ?, stopped_at = ?,
        deadline_at = CASE WHEN timeout_ms IS NULL THEN NULL ELSE ? + timeout_ms END
        WHERE run_id = ? AND path = ? AND visit = ?`,
    )
    .run(reason.at, reason.attempt - 1, reason.at, reason.at, row.run_id, reason.path, reason.visit);
  ctx
    .stmt("DELETE FROM effects WHERE run_id = ? AND path = ? AND visit = ? AND status = 'failed'")
    .run(row.run_id, reason.path, reason.visit);
  return null;
}

/**
 * The clock's claim rule: the run is parked on a wait or retry, not paused, and due by `now` plus the
 * wake lead (its worker sleeps out the rest of the lead before it goes on).
 */
export function dueRun(row: RunRow, now: number): RunRow | Conflict {
  const due = row.wake_at !== null && row.wake_at <= now + WAKE_LEAD_MS;
  if (row.status === "parked" && row.paused === 0 && due) return row;
  return {
    kind: "state_mismatch",
    resource: "run",
    id: row.run_id,
    expected: "parked on a wait or retry that is due",
    actual: row.paused === 1 ? "paused" : row.wake_at === null ? row.status : "not due yet",
  };
}

/** The earliest wake-up time of any unpaused parked run after `after` (exclusive), or null. */
export function nextWakeAt(ctx: StoreContext, after = -1): number | null {
  const found = ctx
    .stmt(
      "SELECT wake_at FROM runs WHERE wake_at IS NOT NULL AND paused = 0 AND wake_at > ? ORDER BY wake_at LIMIT 1",
    )
    .get(after) as { wake_at: number } | undefined;
  return found?.wake_at ?? null;
}

/** The runs due by `now`, earliest first, at most `limit`. */
export function listDueRuns(ctx: StoreContext, now: number, limit: number): string[] {
  const rows = ctx
    .stmt(
      "SELECT run_id FROM runs WHERE wake_at IS NOT NULL AND paused = 0 AND wake_at <= ? ORDER BY wake_at LIMIT ?",
    )
    .all(now, limit) as { run_id: string }[];
  return rows.map((r) => r.run_id);
}

/**
 * The due time of the run's open wait or retry visit when it is later than `since` (when the lost
 * worker was launched: the clock woke it within the lead), else null; of several open visits (parallel
 * branches), the earliest such. A worker launched after the due time gets no second wake from this,
 * so a worker that keeps dying cannot loop on the clock.
 */
export function dueAfter(ctx: StoreContext, runId: string, since: number): number | null {
  const found = ctx
    .stmt("SELECT MIN(due_at) AS due FROM run_steps WHERE run_id = ? AND status = 'running' AND due_at > ?")
    .get(runId, since) as { due: number | null } | undefined;
  return found?.due ?? null;
}
