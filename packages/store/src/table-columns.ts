import type { RunRecord, TurnRecord } from "@piw/protocol";
import {
  blob,
  integer,
  integerOf,
  nullable,
  real,
  type RowOf,
  type TableSpec,
  text,
  textAs,
  textOf,
} from "./column-spec.js";

// Every table of `SCHEMA_SQL`, column by column in DDL order. The store's row types are derived from
// these; `row-types.test.ts` compares them with the tables SQLite builds, so a column added, dropped,
// retyped or made nullable in the DDL fails that test until it is made here too.

const flag = () => integerOf(0, 1);

export const TABLE_COLUMNS = {
  piw_meta: {
    key: text(),
    value: text(),
  },
  blobs: {
    hash: text(),
    media_type: textOf("application/json", "text/plain"),
    size: integer(),
    content: blob(),
    created_at: integer(),
  },
  runs: {
    run_id: text(),
    root_run_id: text(),
    parent_run_id: nullable(text()),
    origin_command: textOf("start", "continue", "restart"),
    next_command: textOf("start", "resume", "continue", "restart"),
    restart_number: integer(),
    parent_terminal_fingerprint: nullable(text()),
    accepted_path: nullable(text()),
    accepted_visit: nullable(integer()),
    accepted_answer_hash: nullable(text()),
    workflow_name: text(),
    source_json: text(),
    definition_digest: text(),
    manifest_hash: text(),
    origin_kind: textOf("pi", "cli"),
    origin_session: nullable(text()),
    status: textOf("queued", "starting", "running", "parked", "done", "failed", "cancelled"),
    outcome: nullable(textOf("completed", "waiting", "failed", "timed_out", "cancelled")),
    generation: integer(),
    claim_token: nullable(text()),
    lease_expires_at: nullable(integer()),
    revision: integer(),
    progress_revision: integer(),
    launch_revision: nullable(integer()),
    recovery_reason: nullable(text()),
    /** When the host's clock wakes this parked run (a wait or a retry pause); null: never by itself. */
    wake_at: nullable(integer()),
    paused: flag(),
    step_count: integer(),
    cursor_path: nullable(text()),
    cursor_visit: nullable(integer()),
    /** Null once a launch that never ran ended: its private input was cleared (see private-launch-state.ts). */
    input_hash: nullable(text()),
    /** The starting client's environment (JSON); null: none saved, or cleared with the input. */
    env_hash: nullable(text()),
    final_output_hash: nullable(text()),
    error_code: nullable(textAs<NonNullable<RunRecord["errorCode"]>>()),
    error_hash: nullable(text()),
    presentation_hash: nullable(text()),
    /** 1: the model that started the run gets a follow-up turn when it fails / is cancelled by another. */
    notify_model_failure: flag(),
    notify_model_cancel: flag(),
    working_dir: nullable(text()),
    /** The client's key for the action that created the run; read only to adopt a repeated request. */
    request_key: nullable(text()),
    /** The run's budget (canonical JSON of a `Budget`); null: none. A resume may raise it. */
    budget_json: nullable(text()),
    terminal_fingerprint: nullable(text()),
    presentation_state: textOf("none", "pending", "created", "failed"),
    presentation_error: nullable(text()),
    created_at: integer(),
    updated_at: integer(),
    started_at: nullable(integer()),
    finished_at: nullable(integer()),
  },
  run_steps: {
    run_id: text(),
    path: text(),
    visit: integer(),
    node_kind: text(),
    attempt: integer(),
    status: textOf("running", "succeeded", "failed", "timed_out"),
    output_hash: nullable(text()),
    error_code: nullable(text()),
    error_hash: nullable(text()),
    next_path: nullable(text()),
    started_at: integer(),
    finished_at: nullable(integer()),
    /**
     * The visit's deadline (null: none), set when it first opened. A reopened visit keeps what was left of
     * it: the reopen moves it on by the time the visit's execution was stopped (`stopped_at`).
     */
    timeout_ms: nullable(integer()),
    deadline_at: nullable(integer()),
    /** When the open visit's execution last stopped (its run parked, its worker lost); null while it runs. */
    stopped_at: nullable(integer()),
    /** When a wait or the next retry attempt of this visit is due (null: not scheduled). */
    due_at: nullable(integer()),
    /** Attempts of this visit that failed and were retried under its retry policy. */
    failed_attempts: integer(),
  },
  effects: {
    effect_id: text(),
    run_id: text(),
    path: text(),
    visit: integer(),
    effect_type: text(),
    ordinal: integer(),
    mode: textOf("idempotent", "manual"),
    request_fingerprint: text(),
    request_hash: text(),
    status: textOf("reserved", "settled", "failed"),
    result_hash: nullable(text()),
    error_code: nullable(text()),
    error_hash: nullable(text()),
    reserved_at: integer(),
    settled_at: nullable(integer()),
  },
  turns: {
    turn_id: text(),
    run_id: nullable(text()),
    path: nullable(text()),
    visit: nullable(integer()),
    session_id: text(),
    request_id: text(),
    message_id: text(),
    status: textOf("open", "ended", "lost", "unowned"),
    end_reason: nullable(textAs<NonNullable<TurnRecord["endReason"]>>()),
    /** What the turn's model replies used so far, as its Pi session reported it (`turns.usage`). */
    tokens: integer(),
    usd: real(),
    started_at: integer(),
    ended_at: nullable(integer()),
  },
  messages: {
    message_id: text(),
    run_id: text(),
    session_id: nullable(text()),
    kind: textOf("step_prompt", "notify", "launch_failure", "terminal", "presentation"),
    path: nullable(text()),
    visit: nullable(integer()),
    body_hash: text(),
    trigger_turn: flag(),
    status: textOf("pending", "claimed", "delivered", "cancelled"),
    claim_token: nullable(text()),
    lease_expires_at: nullable(integer()),
    created_at: integer(),
    delivered_at: nullable(integer()),
  },
  run_progress: {
    run_id: text(),
    path: text(),
    visit: integer(),
    attempt: integer(),
    done: nullable(real()),
    total: nullable(real()),
    message: nullable(text()),
    samples: text(),
    saves: integer(),
    first_at: integer(),
    updated_at: integer(),
  },
  run_events: {
    seq: integer(),
    run_id: text(),
    revision: integer(),
    type: text(),
    path: nullable(text()),
    visit: nullable(integer()),
    data: nullable(text()),
    at: integer(),
  },
  worker_launches: {
    launch_id: text(),
    run_id: text(),
    generation: integer(),
    command_type: textOf("start", "resume", "continue", "restart"),
    launch_revision: integer(),
    pid: nullable(integer()),
    exit_kind: nullable(textOf("reported", "lost", "orphaned")),
    exit_phase: nullable(text()),
    exit_code: nullable(text()),
    exit_message: nullable(text()),
    exit_decision: nullable(textOf("none", "relaunch", "parked", "failed", "requeued")),
    started_at: integer(),
    /** The last time the host saw this launch's worker alive (its heartbeat); null before the first. */
    alive_at: nullable(integer()),
    ended_at: nullable(integer()),
  },
} as const satisfies Readonly<Record<string, TableSpec>>;

export type TableName = keyof typeof TABLE_COLUMNS;

/** One row of `table`, exactly as `SELECT *` returns it. Stays inside the store. */
export type TableRow<N extends TableName> = RowOf<(typeof TABLE_COLUMNS)[N]>;
