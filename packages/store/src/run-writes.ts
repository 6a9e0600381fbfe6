import { type Conflict, isAllowedTransition, type RunStatus, type TraceEventInput } from "@piw/protocol";
import { canonicalJson } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import type { RunRow } from "./rows.js";

// The only module that writes the `runs` table and the `run_events` trace. A run is created `queued`
// by `insertQueuedRun`; its status changes only through `transitionRun`, which holds every change to
// the run-status table; every other change goes through `updateRun`, whose columns exclude `status`.

/**
 * The columns a change may set. Identity, lineage and what the run was prepared with never change;
 * `revision`, `progress_revision` and `updated_at` belong to the writer; `status` to `transitionRun`.
 */
type MutableRunColumn =
  | "generation"
  | "claim_token"
  | "lease_expires_at"
  | "paused"
  | "recovery_reason"
  | "wake_at"
  | "next_command"
  | "started_at"
  | "launch_revision"
  | "step_count"
  | "cursor_path"
  | "cursor_visit"
  | "outcome"
  | "final_output_hash"
  | "error_code"
  | "error_hash"
  | "terminal_fingerprint"
  | "presentation_state"
  | "presentation_error"
  | "notify_model_cancel"
  | "finished_at"
  // Only ever cleared: a launch that ends before it ran keeps no private input or environment.
  | "input_hash"
  | "env_hash"
  // Raised by a resume's `--budget`.
  | "budget_json";
export type RunUpdate = Partial<Pick<RunRow, MutableRunColumn>>;

/** What a new run row is made of; the writer adds its `queued` status, counters and times. */
export type NewRun = Pick<
  RunRow,
  | "run_id"
  | "root_run_id"
  | "parent_run_id"
  | "origin_command"
  | "next_command"
  | "restart_number"
  | "parent_terminal_fingerprint"
  | "accepted_path"
  | "accepted_visit"
  | "accepted_answer_hash"
  | "workflow_name"
  | "source_json"
  | "definition_digest"
  | "manifest_hash"
  | "origin_kind"
  | "origin_session"
  | "origin_schedule"
  | "scheduled_for"
  | "input_hash"
  | "env_hash"
  | "presentation_hash"
  | "notify_model_failure"
  | "notify_model_cancel"
  | "working_dir"
  | "request_key"
  | "budget_json"
>;

/** A status change the run-status table forbids reached the writer: a bug in the caller, not bad input. */
export class IllegalTransitionError extends StoreError {
  constructor(
    readonly runId: string,
    readonly from: RunStatus,
    readonly to: RunStatus,
  ) {
    super("illegal_transition", `Run ${runId} cannot move from ${from} to ${to}; nothing was saved.`);
  }
}

const MAX_EVENT_DATA_BYTES = 4096;

const NEW_RUN_COLUMNS = [
  "run_id",
  "root_run_id",
  "parent_run_id",
  "origin_command",
  "next_command",
  "restart_number",
  "parent_terminal_fingerprint",
  "accepted_path",
  "accepted_visit",
  "accepted_answer_hash",
  "workflow_name",
  "source_json",
  "definition_digest",
  "manifest_hash",
  "origin_kind",
  "origin_session",
  "origin_schedule",
  "scheduled_for",
  "input_hash",
  "env_hash",
  "presentation_hash",
  "notify_model_failure",
  "notify_model_cancel",
  "working_dir",
  "request_key",
  "budget_json",
] as const satisfies readonly (keyof NewRun)[];

const INSERT_RUN = `INSERT INTO runs (${NEW_RUN_COLUMNS.join(", ")}, status, generation, revision,
  progress_revision, paused, step_count, presentation_state, created_at, updated_at)
  VALUES (${NEW_RUN_COLUMNS.map(() => "?").join(", ")}, 'queued', 0, 1, 0, 0, 0, 'none', ?, ?)`;

/** Create a run at revision 1, `queued`, with its `run.queued` event; returns the saved row. */
export function insertQueuedRun(
  ctx: StoreContext,
  run: NewRun,
  answeredBy?: "human" | "model" | "automatic",
): RunRow {
  const now = ctx.now();
  ctx.stmt(INSERT_RUN).run(...NEW_RUN_COLUMNS.map((column) => run[column]), now, now);
  appendTrace(ctx, run.run_id, 1, {
    type: "run.queued",
    data:
      run.origin_command === "start" || run.parent_run_id === null
        ? { command: "start" }
        : {
            command: run.origin_command,
            parentRunId: run.parent_run_id,
            ...(answeredBy === undefined ? {} : { answeredBy }),
          },
  });
  return ctx.writtenRow("runs", "WHERE run_id = ?", run.run_id);
}

/** The evidence for refusing to move `row` to `to`. */
export function invalidTransition(row: RunRow, to: RunStatus): Conflict {
  return { kind: "invalid_transition", runId: row.run_id, from: row.status, to };
}

/** The conflict a caller returns when the table forbids `row`'s move to `to`; null when it allows it. */
export function transitionRefusal(row: RunRow, to: RunStatus): Conflict | null {
  return isAllowedTransition(row.status, to) ? null : invalidTransition(row, to);
}

/**
 * The one writer of `runs.status`: move `row` to `to` with `columns`, as the table allows, and record
 * `event`. A forbidden move throws before anything is written. Returns the new revision.
 */
export function transitionRun(
  ctx: StoreContext,
  row: RunRow,
  to: RunStatus,
  columns: RunUpdate,
  event: TraceEventInput,
): number {
  if (!isAllowedTransition(row.status, to)) throw new IllegalTransitionError(row.run_id, row.status, to);
  return writeRun(ctx, row, [{ columns: { ...columns, status: to }, event, progress: false }]);
}

/**
 * Change a run without moving its status, and record `event`. `progress` marks durable progress (a
 * finished visit, an effect, a message), which decides whether a lost worker is relaunched.
 */
export function updateRun(
  ctx: StoreContext,
  row: RunRow,
  columns: RunUpdate,
  event: TraceEventInput,
  options: { progress?: boolean } = {},
): number {
  return writeRun(ctx, row, [{ columns, event, progress: options.progress === true }]);
}

/** One `updateRun` of a run, not yet written: held to share one UPDATE with the next change. */
export interface RunChange {
  columns: RunUpdate;
  event: TraceEventInput;
  progress: boolean;
}

/**
 * `held` then `change` in one guarded UPDATE: the row, its revisions and its two trace events are exactly
 * what two `updateRun` calls save. A node boundary (finish, then start) writes the run row once.
 */
export function updateRunAfter(
  ctx: StoreContext,
  row: RunRow,
  held: RunChange | null,
  columns: RunUpdate,
  event: TraceEventInput,
): number {
  const change = { columns, event, progress: false };
  return writeRun(ctx, row, held === null ? [change] : [held, change]);
}

/** Write a held change on its own: the next write of the run is not an `updateRunAfter`. */
export function writeHeld(ctx: StoreContext, row: RunRow, held: RunChange | null): void {
  if (held !== null) writeRun(ctx, row, [held]);
}

/** The columns that say which workflow definition a run follows. */
export type RunDefinition = Pick<RunRow, "source_json" | "definition_digest" | "manifest_hash">;

/**
 * Point a run at a changed workflow definition: the one write of these identity columns after the
 * run was created, made only for a resume a person accepted (`redefineRun`).
 */
export function redefineRunRow(ctx: StoreContext, row: RunRow, definition: RunDefinition): number {
  return writeRun(ctx, row, [
    { columns: definition as RunUpdate, event: { type: "run.redefined" }, progress: false },
  ]);
}

type SqlValue = string | number | null;

/**
 * The guarded update: set the columns and bump the revision once per change, on the revision read in
 * this transaction. Each change keeps its own revision in the trace, as if written one by one.
 */
function writeRun(
  ctx: StoreContext,
  row: RunRow,
  changes: ReadonlyArray<RunChange & { columns: RunUpdate & { status?: RunStatus } }>,
): number {
  const from = row.revision;
  const revision = from + changes.length;
  const now = ctx.now();
  const columns: RunUpdate & { status?: RunStatus } = {};
  let progressRevision: number | null = null;
  changes.forEach((change, i) => {
    Object.assign(columns, change.columns);
    if (change.progress) progressRevision = from + 1 + i;
  });
  const progress = progressRevision !== null;
  const keys = (Object.keys(columns) as (keyof typeof columns)[]).sort();
  const assignments = [
    ...keys.map((k) => `${k} = ?`),
    "revision = ?",
    "updated_at = ?",
    ...(progress ? ["progress_revision = ?"] : []),
  ];
  const sql = `UPDATE runs SET ${assignments.join(", ")} WHERE run_id = ? AND revision = ?`;
  const values: SqlValue[] = keys.map((k) => columns[k] ?? null);
  values.push(revision, now);
  if (progressRevision !== null) values.push(progressRevision);
  values.push(row.run_id, from);
  const result = ctx.stmt(sql).run(...values);
  // The revision was read inside this IMMEDIATE transaction, so a miss is a bug, not a race.
  if (result.changes !== 1) throw new StoreError("store_failed", "A guarded run update matched no row.");
  Object.assign(
    row,
    columns,
    { revision, updated_at: now },
    progressRevision === null ? {} : { progress_revision: progressRevision },
  );
  changes.forEach((change, i) => {
    appendTrace(ctx, row.run_id, from + 1 + i, change.event);
  });
  return revision;
}

/** Append one event to the run's trace, in the caller's transaction. */
function appendTrace(ctx: StoreContext, runId: string, revision: number, event: TraceEventInput): void {
  const data = event.data === null || event.data === undefined ? null : canonicalJson(event.data);
  // Every payload field is bounded by its schema; an event past the limit is a bug and saves nothing.
  if (data !== null && Buffer.byteLength(data, "utf8") > MAX_EVENT_DATA_BYTES) {
    throw new StoreError(
      "invalid_record",
      `A ${event.type} trace event is larger than ${MAX_EVENT_DATA_BYTES} bytes.`,
    );
  }
  ctx
    .stmt(
      "INSERT INTO run_events (run_id, revision, type, path, visit, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .run(runId, revision, event.type, event.path ?? null, event.visit ?? null, data, ctx.now());
}
