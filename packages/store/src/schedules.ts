import {
  type AddSchedule,
  adopted,
  applied,
  conflict,
  type Conflict,
  type ReservePreparedRun,
  type RunRecord,
  type SafeError,
  SCHEDULE_MAX_FAILURES,
  type ScheduleRecord,
  type Transition,
} from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { envOf, getRow, mapScheduleRow, type ScheduleRow, timingOf } from "./schedule-readers.js";
import { mapRunRow } from "./rows.js";
import { reservePreparedRun } from "./run-reservation.js";
import { chooseFiring, jitterFor, nextTimeAfter } from "./schedule-timing.js";

// The schedules table: the store alone writes it. A row changes only through these transitions, each one
// guarded by the row's state, and a firing that starts a run saves the run and moves the schedule on in
// one transaction, so a host killed around a firing leaves either both or neither.

/** The run a schedule's firing for `scheduledFor` makes, and so the request key that reserves it. */
function firingRequestKey(row: Pick<ScheduleRow, "schedule_id" | "created_at">, scheduledFor: number) {
  return `schedule:${row.schedule_id}:${row.created_at}:${scheduledFor}`;
}

/** The schedule's next time after `after` and when it fires, or nulls once it has ended (`until`). */
function nextFiring(row: ScheduleRow, after: number): { next_for: number | null; fire_at: number | null } {
  const next = nextTimeAfter(timingOf(row), row.anchor_at, after);
  if (next === null || (row.until_at !== null && next > row.until_at))
    return { next_for: null, fire_at: null };
  return { next_for: next, fire_at: next + jitterFor(row.schedule_id, next, row.jitter_ms) };
}

function notFound(scheduleId: string): Conflict {
  return { kind: "not_found", resource: "schedule", id: scheduleId };
}

function update(ctx: StoreContext, row: ScheduleRow, columns: Partial<ScheduleRow>): ScheduleRow {
  const names = Object.keys(columns) as (keyof ScheduleRow)[];
  const sets = names.map((name) => `${name} = ?`).join(", ");
  ctx
    .stmt(
      `UPDATE schedules SET ${sets}${sets ? ", " : ""}revision = revision + 1, updated_at = ? WHERE schedule_id = ?`,
    )
    .run(...names.map((name) => columns[name]), ctx.now(), row.schedule_id);
  return ctx.writtenRow("schedules", "WHERE schedule_id = ?", row.schedule_id);
}

/** Save a new schedule; a resent add of the same schedule is adopted, another one under its name refused. */
export function addSchedule(ctx: StoreContext, req: AddSchedule): Transition<ScheduleRecord> {
  return ctx.tx(() => {
    const existing = getRow(ctx, req.scheduleId);
    if (existing) {
      const same =
        existing.workflow_ref === req.workflowRef &&
        existing.working_dir === req.workingDir &&
        JSON.stringify(timingOf(existing)) === JSON.stringify(req.timing);
      return same
        ? adopted(mapScheduleRow(ctx, existing))
        : conflict({ kind: "request_mismatch", resource: "schedule", id: req.scheduleId });
    }
    const now = ctx.now();
    const timing = req.timing;
    ctx
      .stmt(
        `INSERT INTO schedules (schedule_id, workflow_ref, working_dir, task, input_hash, env_hash, timing_kind,
          every_ms, cron, time_zone, overlap, catch_up, catch_up_window_ms, jitter_ms, until_at, anchor_at,
          next_for, fire_at, paused, failures, revision, created_at, updated_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0, 0, 1, ?, ?)`,
      )
      .run(
        req.scheduleId,
        req.workflowRef,
        req.workingDir,
        req.task ?? null,
        req.input === undefined ? null : ctx.putJson(req.input),
        req.env === undefined ? null : ctx.putJson(req.env),
        timing.kind,
        timing.kind === "every" ? timing.everyMs : null,
        timing.kind === "cron" ? timing.expression : null,
        timing.kind === "cron" ? (timing.timeZone ?? null) : null,
        req.overlap,
        req.catchUp,
        req.catchUpWindowMs,
        req.jitterMs,
        req.untilAt ?? null,
        now,
        now,
        now,
      );
    const row = ctx.writtenRow("schedules", "WHERE schedule_id = ?", req.scheduleId);
    return applied(mapScheduleRow(ctx, update(ctx, row, nextFiring(row, now))));
  });
}

/** Pause (by a person, with an optional note); pausing a paused schedule is adopted. */
export function pauseSchedule(
  ctx: StoreContext,
  scheduleId: string,
  note: string | null,
): Transition<ScheduleRecord> {
  return ctx.tx(() => {
    const row = getRow(ctx, scheduleId);
    if (!row) return conflict(notFound(scheduleId));
    if (row.paused === 1) return adopted(mapScheduleRow(ctx, row));
    return applied(
      mapScheduleRow(ctx, update(ctx, row, { paused: 1, pause_reason: "user", pause_note: note })),
    );
  });
}

/**
 * Resume a paused schedule: its failure count starts again, and it goes on from its next time after now
 * (what fell due while it was paused is not made up).
 */
export function resumeSchedule(ctx: StoreContext, scheduleId: string): Transition<ScheduleRecord> {
  return ctx.tx(() => {
    const row = getRow(ctx, scheduleId);
    if (!row) return conflict(notFound(scheduleId));
    if (row.paused === 0) return adopted(mapScheduleRow(ctx, row));
    const next = row.next_for !== null && row.next_for > ctx.now() ? {} : nextFiring(row, ctx.now());
    return applied(
      mapScheduleRow(
        ctx,
        update(ctx, row, { paused: 0, pause_reason: null, pause_note: null, failures: 0, ...next }),
      ),
    );
  });
}

/** Delete a schedule; its runs stay (they name it in their origin). */
export function deleteSchedule(ctx: StoreContext, scheduleId: string): Transition<ScheduleRecord> {
  return ctx.tx(() => {
    const row = getRow(ctx, scheduleId);
    if (!row) return conflict(notFound(scheduleId));
    const record = mapScheduleRow(ctx, row);
    ctx.stmt("DELETE FROM schedules WHERE schedule_id = ?").run(scheduleId);
    return applied(record);
  });
}

/** What the clock should do for a due schedule now. */
export type FiringPlan =
  | { kind: "fire"; scheduledFor: number }
  /** Every due time was older than the catch-up window: the schedule moved on to its next time. */
  | { kind: "missed" }
  | { kind: "not_due" };

/**
 * Decide which due time a firing at now is for (the catch-up rule). When every due time was missed, the
 * schedule moves on at once (a `missed` firing, visible in the list) and nothing fires.
 */
export function planFiring(ctx: StoreContext, scheduleId: string): Transition<FiringPlan> {
  return ctx.tx(() => {
    const row = getRow(ctx, scheduleId);
    if (!row) return conflict(notFound(scheduleId));
    const now = ctx.now();
    if (row.paused === 1 || row.next_for === null || row.fire_at === null || row.fire_at > now) {
      return applied({ kind: "not_due" });
    }
    const choice = chooseFiring(
      {
        timing: timingOf(row),
        anchorAt: row.anchor_at,
        catchUp: row.catch_up,
        windowMs: row.catch_up_window_ms,
      },
      row.next_for,
      now,
    );
    if (choice.kind === "fire") return applied({ kind: "fire", scheduledFor: choice.scheduledFor });
    update(ctx, row, {
      ...nextFiring(row, choice.resumeAfter),
      last_for: row.next_for,
      last_at: now,
      last_outcome: "missed",
      last_run_id: null,
      last_error_code: null,
      last_error: null,
    });
    return applied({ kind: "missed" });
  });
}

/** Where a firing came from: the schedule's next time, its buffered time, or a person's trigger. */
export type FiringSource = "due" | "buffered" | "manual";

export type FiringResult =
  | { kind: "started"; reserve: Omit<ReservePreparedRun, "origin" | "requestKey" | "workingDir" | "env"> }
  | { kind: "skipped" }
  | { kind: "buffered" }
  | { kind: "failed"; error: SafeError };

export interface RecordFiring {
  scheduleId: string;
  scheduledFor: number;
  source: FiringSource;
  result: FiringResult;
}

function sourceRefusal(row: ScheduleRow, req: RecordFiring): Conflict | null {
  const mismatch = (expected: string, actual: string): Conflict => ({
    kind: "state_mismatch",
    resource: "schedule",
    id: row.schedule_id,
    expected,
    actual,
  });
  switch (req.source) {
    case "due":
      if (row.paused === 1) return mismatch("not paused", "paused");
      if (row.next_for === null || row.next_for > req.scheduledFor) {
        return mismatch(
          `due for ${req.scheduledFor}`,
          row.next_for === null ? "ended" : `next ${row.next_for}`,
        );
      }
      return null;
    case "buffered":
      return row.buffered_for === req.scheduledFor
        ? null
        : mismatch(`buffered ${req.scheduledFor}`, `buffered ${row.buffered_for ?? "none"}`);
    case "manual":
      return null;
    default:
      return req.source satisfies never;
  }
}

/**
 * Save what one firing did, and move the schedule on past it: a started run is reserved here with the
 * firing's request key (a second firing for the same time adopts it), a failure counts towards the
 * schedule pausing itself.
 */
export function recordFiring(
  ctx: StoreContext,
  req: RecordFiring,
): Transition<{ schedule: ScheduleRecord; run: RunRecord | null }> {
  return ctx.tx(() => {
    const row = getRow(ctx, req.scheduleId);
    if (!row) return conflict(notFound(req.scheduleId));
    const requestKey = firingRequestKey(row, req.scheduledFor);
    const made = ctx.selectRow("runs", "WHERE request_key = ?", requestKey);
    if (made) return adopted({ schedule: mapScheduleRow(ctx, row), run: mapRunRow(made) });
    const refusal = sourceRefusal(row, req);
    if (refusal) return conflict(refusal);
    const now = ctx.now();
    const moved: Partial<ScheduleRow> =
      req.source === "due"
        ? nextFiring(row, req.scheduledFor)
        : req.source === "buffered"
          ? { buffered_for: null }
          : {};
    const last = { last_for: req.scheduledFor, last_at: now, last_error_code: null, last_error: null };
    const result = req.result;
    switch (result.kind) {
      case "started": {
        const reserved = reservePreparedRun(ctx, {
          ...result.reserve,
          origin: { kind: "schedule", scheduleId: row.schedule_id, scheduledFor: req.scheduledFor },
          workingDir: row.working_dir,
          requestKey,
          ...(row.env_hash === null ? {} : { env: envOf(ctx, row.env_hash) }),
        });
        if (reserved.kind !== "applied")
          return reserved.kind === "adopted" ? conflict(notFound(requestKey)) : reserved;
        const saved = update(ctx, row, {
          ...moved,
          ...last,
          last_outcome: "started",
          last_run_id: reserved.value.runId,
          failures: 0,
        });
        return applied({ schedule: mapScheduleRow(ctx, saved), run: reserved.value });
      }
      case "skipped":
      case "buffered": {
        const buffer = result.kind === "buffered" ? { buffered_for: req.scheduledFor } : {};
        const saved = update(ctx, row, {
          ...moved,
          ...buffer,
          ...last,
          last_outcome: result.kind,
          last_run_id: null,
        });
        return applied({ schedule: mapScheduleRow(ctx, saved), run: null });
      }
      case "failed": {
        const failures = row.failures + 1;
        const pause =
          failures >= SCHEDULE_MAX_FAILURES
            ? {
                paused: 1 as const,
                pause_reason: "failures" as const,
                pause_note: `${failures} firings in a row failed; the last: ${result.error.message}`.slice(
                  0,
                  512,
                ),
              }
            : {};
        const saved = update(ctx, row, {
          ...moved,
          ...last,
          ...pause,
          failures,
          last_outcome: "failed",
          last_run_id: null,
          last_error_code: result.error.code,
          last_error: result.error.message,
        });
        return applied({ schedule: mapScheduleRow(ctx, saved), run: null });
      }
      default:
        return result satisfies never;
    }
  });
}
