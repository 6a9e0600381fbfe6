import type { JsonValue, ScheduleRecord, ScheduleTiming } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import type { TableRow } from "./table-columns.js";

// The schedules table's row type, its mapper to the protocol's record, and its readers.

export type ScheduleRow = TableRow<"schedules">;

export function timingOf(row: ScheduleRow): ScheduleTiming {
  if (row.timing_kind === "every") return { kind: "every", everyMs: row.every_ms ?? 60_000 };
  return {
    kind: "cron",
    expression: row.cron ?? "",
    ...(row.time_zone === null ? {} : { timeZone: row.time_zone }),
  };
}

export function getRow(ctx: StoreContext, scheduleId: string): ScheduleRow | undefined {
  return ctx.selectRow("schedules", "WHERE schedule_id = ?", scheduleId);
}

export function mapScheduleRow(ctx: StoreContext, row: ScheduleRow): ScheduleRecord {
  const run = row.last_run_id === null ? undefined : ctx.getRunRow(row.last_run_id);
  return {
    scheduleId: row.schedule_id,
    workflowRef: row.workflow_ref,
    workingDir: row.working_dir,
    timing: timingOf(row),
    overlap: row.overlap,
    catchUp: row.catch_up,
    catchUpWindowMs: row.catch_up_window_ms,
    jitterMs: row.jitter_ms,
    untilAt: row.until_at,
    nextFor: row.next_for,
    nextAt: row.fire_at,
    paused: row.paused === 1,
    pauseReason: row.pause_reason,
    pauseNote: row.pause_note,
    bufferedFor: row.buffered_for,
    failures: row.failures,
    lastFiring:
      row.last_for === null || row.last_at === null || row.last_outcome === null
        ? null
        : {
            scheduledFor: row.last_for,
            at: row.last_at,
            outcome: row.last_outcome,
            runId: row.last_run_id,
            runStatus: run?.status ?? null,
            runOutcome: run?.outcome ?? null,
            error:
              row.last_error_code === null
                ? null
                : { code: row.last_error_code, message: row.last_error ?? "" },
          },
    createdAt: row.created_at,
    revision: row.revision,
  };
}

export function envOf(ctx: StoreContext, hash: string): Record<string, string> {
  return ctx.readJsonBlob(hash) as Record<string, string>;
}

/** What a firing needs to prepare its run: the workflow, where, and its task or input. */
export interface ScheduleLaunch {
  scheduleId: string;
  workflowRef: string;
  workingDir: string;
  task: string | null;
  input: JsonValue | null;
  overlap: ScheduleRow["overlap"];
  bufferedFor: number | null;
}

export function readScheduleLaunch(ctx: StoreContext, scheduleId: string): ScheduleLaunch | null {
  const row = getRow(ctx, scheduleId);
  if (!row) return null;
  return {
    scheduleId: row.schedule_id,
    workflowRef: row.workflow_ref,
    workingDir: row.working_dir,
    task: row.task,
    input: row.input_hash === null ? null : ctx.readJsonBlob(row.input_hash),
    overlap: row.overlap,
    bufferedFor: row.buffered_for,
  };
}

export function getSchedule(ctx: StoreContext, scheduleId: string): ScheduleRecord | null {
  const row = getRow(ctx, scheduleId);
  return row ? mapScheduleRow(ctx, row) : null;
}

export function listSchedules(ctx: StoreContext): ScheduleRecord[] {
  return ctx.selectRows("schedules", "ORDER BY schedule_id").map((row) => mapScheduleRow(ctx, row));
}

/** The earliest firing time of an unpaused schedule after `after` (exclusive), or null. */
export function nextScheduleDueAt(ctx: StoreContext, after = -1): number | null {
  const found = ctx
    .stmt(
      "SELECT fire_at FROM schedules WHERE fire_at IS NOT NULL AND paused = 0 AND fire_at > ? ORDER BY fire_at LIMIT 1",
    )
    .get(after) as { fire_at: number } | undefined;
  return found?.fire_at ?? null;
}

/** The unpaused schedules due by `now`, earliest first, at most `limit`. */
export function listDueSchedules(
  ctx: StoreContext,
  now: number,
  limit: number,
): { scheduleId: string; dueAt: number }[] {
  const rows = ctx
    .stmt(
      "SELECT schedule_id, fire_at FROM schedules WHERE fire_at IS NOT NULL AND paused = 0 AND fire_at <= ? ORDER BY fire_at LIMIT ?",
    )
    .all(now, limit) as { schedule_id: string; fire_at: number }[];
  return rows.map((r) => ({ scheduleId: r.schedule_id, dueAt: r.fire_at }));
}

/** Schedules holding a buffered firing: at host start, those whose active run ended meanwhile fire it. */
export function listBufferedSchedules(ctx: StoreContext): string[] {
  const rows = ctx.stmt("SELECT schedule_id FROM schedules WHERE buffered_for IS NOT NULL").all() as {
    schedule_id: string;
  }[];
  return rows.map((r) => r.schedule_id);
}

/** The schedule's runs that have not ended (queued, starting, running or parked), oldest first. */
export function activeScheduleRuns(ctx: StoreContext, scheduleId: string): string[] {
  const rows = ctx
    .stmt(
      `SELECT run_id FROM runs WHERE origin_schedule = ? AND status IN ('queued', 'starting', 'running', 'parked')
        ORDER BY created_at`,
    )
    .all(scheduleId) as { run_id: string }[];
  return rows.map((r) => r.run_id);
}
