import type {
  JsonValue,
  RunRecord,
  RunStatus,
  TerminalOutcome,
  TraceEvent,
  TurnEntries,
} from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { mapRunRow } from "./rows.js";
import { requireRun } from "./terminal-readers.js";
import type { TableRow } from "./table-columns.js";

export function getRun(ctx: StoreContext, runId: string): RunRecord | null {
  return ctx.read(() => {
    const row = ctx.getRunRow(runId);
    return row ? mapRunRow(row) : null;
  });
}

export interface ListRunsQuery {
  statuses?: RunStatus[];
  /** With statuses, a run matches when its status or its outcome is listed. */
  outcomes?: TerminalOutcome[];
  sessionId?: string;
  /** Only the runs this schedule's firings made. */
  scheduleId?: string;
  limit?: number;
}

export function listRuns(ctx: StoreContext, query: ListRunsQuery = {}): RunRecord[] {
  return ctx.read(() => {
    const where: string[] = [];
    const values: (string | number)[] = [];
    const states: string[] = [];
    if (query.statuses && query.statuses.length > 0) {
      states.push(`status IN (${query.statuses.map(() => "?").join(", ")})`);
      values.push(...query.statuses);
    }
    if (query.outcomes && query.outcomes.length > 0) {
      states.push(`outcome IN (${query.outcomes.map(() => "?").join(", ")})`);
      values.push(...query.outcomes);
    }
    if (states.length > 0) where.push(`(${states.join(" OR ")})`);
    if (query.sessionId !== undefined) {
      where.push("origin_session = ?");
      values.push(query.sessionId);
    }
    if (query.scheduleId !== undefined) {
      where.push("origin_schedule = ?");
      values.push(query.scheduleId);
    }
    const limit = Math.max(1, Math.min(query.limit ?? 100, 10_000));
    const rest = `${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, run_id LIMIT ${limit}`;
    return ctx.selectRows("runs", rest, ...values).map(mapRunRow);
  });
}

/** The continuation run that an answer to this run's checkpoint started, if any. */
export function findContinuation(ctx: StoreContext, runId: string): string | null {
  return ctx.read(() => {
    const row = ctx
      .stmt(
        "SELECT run_id FROM runs WHERE parent_run_id = ? AND origin_command = 'continue' AND error_code IS NOT 'answer_invalid'",
      )
      .get(runId) as { run_id: string } | undefined;
    return row?.run_id ?? null;
  });
}

/** The run holding a Pi session's one active reservation, if any. */
export function findSessionReservation(ctx: StoreContext, sessionId: string): RunRecord | null {
  return ctx.read(() => {
    const row = ctx.selectRow(
      "runs",
      "WHERE origin_session = ? AND status IN ('queued', 'starting', 'running')",
      sessionId,
    );
    return row ? mapRunRow(row) : null;
  });
}

export interface StepRecord {
  path: string;
  visit: number;
  nodeKind: string;
  attempt: number;
  status: "running" | "succeeded" | "failed" | "timed_out";
  errorCode: string | null;
  nextPath: string | null;
  startedAt: number;
  finishedAt: number | null;
  /** When the visit's deadline passes (epoch ms), and its length; null without a deadline. */
  deadlineAt: number | null;
  timeoutMs: number | null;
  /** When the visit's wait or next retry attempt is due (epoch ms); null when it is not scheduled. */
  dueAt: number | null;
}

export function listRunSteps(ctx: StoreContext, runId: string): StepRecord[] {
  return ctx.read(() =>
    (
      ctx.stmt("SELECT * FROM run_steps WHERE run_id = ? ORDER BY started_at, rowid").all(runId) as Array<{
        path: string;
        visit: number;
        node_kind: string;
        attempt: number;
        status: StepRecord["status"];
        error_code: string | null;
        next_path: string | null;
        started_at: number;
        finished_at: number | null;
        deadline_at: number | null;
        timeout_ms: number | null;
        due_at: number | null;
      }>
    ).map((r) => ({
      path: r.path,
      visit: r.visit,
      nodeKind: r.node_kind,
      attempt: r.attempt,
      status: r.status,
      errorCode: r.error_code,
      nextPath: r.next_path,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      deadlineAt: r.deadline_at,
      timeoutMs: r.timeout_ms,
      dueAt: r.due_at,
    })),
  );
}

export interface EffectRecord {
  effectId: string;
  path: string;
  visit: number;
  effectType: string;
  ordinal: number;
  mode: "idempotent" | "manual";
  status: "reserved" | "settled" | "failed";
}

type EffectRecordRow = Pick<
  TableRow<"effects">,
  "effect_id" | "path" | "visit" | "effect_type" | "ordinal" | "mode" | "status"
>;

/** An effect row's identity and state, as every effect reader starts it. */
export function mapEffectRow(r: EffectRecordRow): EffectRecord {
  return {
    effectId: r.effect_id,
    path: r.path,
    visit: r.visit,
    effectType: r.effect_type,
    ordinal: r.ordinal,
    mode: r.mode,
    status: r.status,
  };
}

export function listRunEffects(ctx: StoreContext, runId: string): EffectRecord[] {
  return ctx.read(() =>
    (
      ctx
        .stmt(
          "SELECT effect_id, path, visit, effect_type, ordinal, mode, status FROM effects WHERE run_id = ? ORDER BY reserved_at, effect_id",
        )
        .all(runId) as EffectRecordRow[]
    ).map(mapEffectRow),
  );
}

/** How many entries the JSON array an effect settled with has, by the visit that saved it. */
export interface EffectListLength {
  path: string;
  visit: number;
  length: number;
}

/**
 * The length of each settled `effectType` effect of the run whose result is a JSON array, counted by
 * SQLite in one query: the arrays themselves never leave the database.
 */
export function listEffectListLengths(
  ctx: StoreContext,
  runId: string,
  effectType: string,
): EffectListLength[] {
  return ctx.read(() =>
    (
      ctx
        .stmt(
          `SELECT e.path, e.visit, CASE WHEN json_valid(t.text) THEN
             CASE WHEN json_type(t.text) = 'array' THEN json_array_length(t.text) END END AS length
           FROM effects e
           JOIN (SELECT hash, CAST(content AS TEXT) AS text FROM blobs) t ON t.hash = e.result_hash
           WHERE e.run_id = ? AND e.effect_type = ? AND e.status = 'settled'
           ORDER BY e.path, e.visit`,
        )
        .all(runId, effectType) as Array<{ path: string; visit: number; length: number | null }>
    ).flatMap((r) => (r.length === null ? [] : [{ path: r.path, visit: r.visit, length: r.length }])),
  );
}

/** A settled workspace effect of a run's chain: where it is, its branch and mode. */
export interface SavedWorkspace {
  path: string;
  branch: string;
  mode: "branch" | "worktree";
}

/**
 * The workspaces (settled `effectType` effects) of every run that shares `runId`'s root: a continued
 * run works in the workspace its parent prepared. Only the three fields leave the database.
 */
export function listRunWorkspaces(ctx: StoreContext, runId: string, effectType: string): SavedWorkspace[] {
  return ctx.read(() =>
    (
      ctx
        .stmt(
          `SELECT json_extract(t.text, '$.path') AS path, json_extract(t.text, '$.branch') AS branch,
             json_extract(t.text, '$.mode') AS mode
           FROM effects e
           JOIN runs r ON r.run_id = e.run_id
           JOIN (SELECT hash, CAST(content AS TEXT) AS text FROM blobs) t ON t.hash = e.result_hash
           WHERE r.root_run_id = (SELECT root_run_id FROM runs WHERE run_id = ?)
             AND e.effect_type = ? AND e.status = 'settled' AND json_valid(t.text)
           ORDER BY e.reserved_at, e.effect_id
           LIMIT 20`,
        )
        .all(runId, effectType) as Array<{ path: unknown; branch: unknown; mode: unknown }>
    ).flatMap((r) =>
      typeof r.path === "string" &&
      typeof r.branch === "string" &&
      (r.mode === "branch" || r.mode === "worktree")
        ? [{ path: r.path, branch: r.branch, mode: r.mode }]
        : [],
    ),
  );
}

/** One saved trace event: where it sits in the run's trace, the revision it recorded, and the event. */
export type RunEventRecord = { seq: number; runId: string; revision: number; at: number } & TraceEvent;

type RunEventRow = TableRow<"run_events">;

function mapRunEventRow(row: RunEventRow): RunEventRecord {
  // `run-writes.ts` is the table's only writer and writes only `TraceEventInput`s, so a row is one.
  const event = {
    type: row.type,
    path: row.path,
    visit: row.visit,
    data: row.data === null ? null : (JSON.parse(row.data) as JsonValue),
  } as TraceEvent;
  return { seq: row.seq, runId: row.run_id, revision: row.revision, at: row.at, ...event };
}

/** The append-only trace of a run, after `afterSeq`. */
export function listRunEvents(
  ctx: StoreContext,
  runId: string,
  afterSeq = 0,
  limit = 1000,
): RunEventRecord[] {
  return ctx.read(() =>
    ctx
      .selectRows(
        "run_events",
        "WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        runId,
        afterSeq,
        Math.max(1, Math.min(limit, 10_000)),
      )
      .map(mapRunEventRow),
  );
}

/**
 * The compiled graph manifest the run follows (JSON). The value is frozen and shared by every reader of
 * the same manifest (the same object each time), so callers may cache what they derive from it by identity.
 */
export function readRunManifest(ctx: StoreContext, runId: string): JsonValue {
  return ctx.read(() => {
    const hash = requireRun(ctx, runId).manifest_hash;
    return ctx.manifests.get(hash, () => ctx.readBlob(hash, "application/json"));
  });
}

/** Turns of a run that are still open: an accepted Pi turn doing the run's current work. */
/** Where each ended turn of a node's visits left its messages in Pi's session file, oldest first. */
export function listTurnEntries(
  ctx: StoreContext,
  runId: string,
  path: string,
): Array<TurnEntries & { visit: number | null }> {
  return ctx.read(() =>
    (
      ctx
        .stmt(
          `SELECT visit, session_file, first_entry_id, last_entry_id FROM turns
           WHERE run_id = ? AND path = ? AND session_file IS NOT NULL ORDER BY started_at, rowid`,
        )
        .all(runId, path) as Array<{
        visit: number | null;
        session_file: string;
        first_entry_id: string;
        last_entry_id: string;
      }>
    ).map((row) => ({
      visit: row.visit,
      sessionFile: row.session_file,
      firstEntryId: row.first_entry_id,
      lastEntryId: row.last_entry_id,
    })),
  );
}

export function listOpenTurns(
  ctx: StoreContext,
  runId: string,
): Array<{ turnId: string; requestId: string; path: string | null; visit: number | null }> {
  return ctx.read(() =>
    (
      ctx
        .stmt("SELECT turn_id, request_id, path, visit FROM turns WHERE run_id = ? AND status = 'open'")
        .all(runId) as Array<{
        turn_id: string;
        request_id: string;
        path: string | null;
        visit: number | null;
      }>
    ).map((r) => ({ turnId: r.turn_id, requestId: r.request_id, path: r.path, visit: r.visit })),
  );
}

/**
 * The run's latest turn if the store settled it as lost without a report from Pi (the run ended while
 * the turn was open): Pi may still be running it, so the host may need to have it aborted.
 */
export function latestSettledTurn(
  ctx: StoreContext,
  runId: string,
): { turnId: string; requestId: string; path: string | null; visit: number | null } | null {
  return ctx.read(() => {
    const row = ctx
      .stmt(
        "SELECT turn_id, request_id, path, visit, status, end_reason FROM turns WHERE run_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
      )
      .get(runId) as
      | {
          turn_id: string;
          request_id: string;
          path: string | null;
          visit: number | null;
          status: string;
          end_reason: string | null;
        }
      | undefined;
    if (row?.status !== "lost" || row.end_reason !== null) return null;
    return { turnId: row.turn_id, requestId: row.request_id, path: row.path, visit: row.visit };
  });
}

/** How many runs are in each status. */
export function countRunsByStatus(ctx: StoreContext): Partial<Record<RunStatus, number>> {
  return ctx.read(() => {
    const counts: Partial<Record<RunStatus, number>> = {};
    for (const r of ctx.stmt("SELECT status, count(*) AS n FROM runs GROUP BY status").all() as Array<{
      status: RunStatus;
      n: number;
    }>) {
      counts[r.status] = r.n;
    }
    return counts;
  });
}
