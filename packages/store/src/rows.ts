import type { MessageRecord, RecoveryReason, RunRecord, SourceIdentity, TurnRecord } from "@piw/protocol";

/** One row of `runs`, exactly as SQLite returns it. Stays inside the store. */
export interface RunRow {
  run_id: string;
  root_run_id: string;
  parent_run_id: string | null;
  origin_command: RunRecord["originCommand"];
  next_command: RunRecord["nextCommand"];
  restart_number: number;
  parent_terminal_fingerprint: string | null;
  accepted_path: string | null;
  accepted_visit: number | null;
  accepted_answer_hash: string | null;
  workflow_name: string;
  source_json: string;
  definition_digest: string;
  manifest_hash: string;
  origin_kind: "pi" | "cli";
  origin_session: string | null;
  status: RunRecord["status"];
  outcome: RunRecord["outcome"];
  generation: number;
  claim_token: string | null;
  lease_expires_at: number | null;
  revision: number;
  progress_revision: number;
  launch_revision: number | null;
  recovery_reason: string | null;
  /** When the host's clock wakes this parked run (a wait or a retry pause); null: never by itself. */
  wake_at: number | null;
  paused: number;
  step_count: number;
  cursor_path: string | null;
  cursor_visit: number | null;
  /** Null once a launch that never ran ended: its private input was cleared (see private-launch-state.ts). */
  input_hash: string | null;
  /** The starting client's environment (JSON); null: none saved, or cleared with the input. */
  env_hash: string | null;
  final_output_hash: string | null;
  error_code: RunRecord["errorCode"];
  error_hash: string | null;
  presentation_hash: string | null;
  /** 1: the model that started the run gets a follow-up turn when it fails / is cancelled by another. */
  notify_model_failure: number;
  notify_model_cancel: number;
  working_dir: string | null;
  /** The client's key for the action that created the run; read only to adopt a repeated request. */
  request_key: string | null;
  terminal_fingerprint: string | null;
  presentation_state: RunRecord["presentationState"];
  presentation_error: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export function mapRunRow(row: RunRow): RunRecord {
  return {
    runId: row.run_id,
    rootRunId: row.root_run_id,
    parentRunId: row.parent_run_id,
    originCommand: row.origin_command,
    nextCommand: row.next_command,
    restartNumber: row.restart_number,
    parentTerminalFingerprint: row.parent_terminal_fingerprint,
    workflowName: row.workflow_name,
    source: JSON.parse(row.source_json) as SourceIdentity,
    definitionDigest: row.definition_digest,
    origin:
      row.origin_kind === "pi" && row.origin_session !== null
        ? { kind: "pi", sessionId: row.origin_session }
        : { kind: "cli" },
    status: row.status,
    outcome: row.outcome,
    generation: row.generation,
    claimed: row.claim_token !== null,
    leaseExpiresAt: row.lease_expires_at,
    revision: row.revision,
    progressRevision: row.progress_revision,
    launchRevision: row.launch_revision,
    recoveryReason: row.recovery_reason === null ? null : (JSON.parse(row.recovery_reason) as RecoveryReason),
    paused: row.paused === 1,
    stepCount: row.step_count,
    cursor:
      row.cursor_path !== null && row.cursor_visit !== null
        ? { path: row.cursor_path, visit: row.cursor_visit }
        : null,
    errorCode: row.error_code,
    terminalFingerprint: row.terminal_fingerprint,
    presentationState: row.presentation_state,
    workingDir: row.working_dir,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

export interface StepRow {
  run_id: string;
  path: string;
  visit: number;
  node_kind: string;
  attempt: number;
  status: "running" | "succeeded" | "failed" | "timed_out";
  output_hash: string | null;
  error_code: string | null;
  error_hash: string | null;
  next_path: string | null;
  started_at: number;
  finished_at: number | null;
  /**
   * The visit's deadline (null: none), set when it first opened. A reopened visit keeps what was left of
   * it: the reopen moves it on by the time the visit's execution was stopped (`stopped_at`).
   */
  timeout_ms: number | null;
  deadline_at: number | null;
  /** When the open visit's execution last stopped (its run parked, its worker lost); null while it runs. */
  stopped_at: number | null;
  /** When a wait or the next retry attempt of this visit is due (null: not scheduled). */
  due_at: number | null;
  /** Attempts of this visit that failed and were retried under its retry policy. */
  failed_attempts: number;
}

export interface EffectRow {
  effect_id: string;
  run_id: string;
  path: string;
  visit: number;
  effect_type: string;
  ordinal: number;
  mode: "idempotent" | "manual";
  request_fingerprint: string;
  request_hash: string;
  status: "reserved" | "settled" | "failed";
  result_hash: string | null;
  error_code: string | null;
  error_hash: string | null;
  reserved_at: number;
  settled_at: number | null;
}

export interface TurnRow {
  turn_id: string;
  run_id: string | null;
  path: string | null;
  visit: number | null;
  session_id: string;
  request_id: string;
  message_id: string;
  status: TurnRecord["status"];
  end_reason: TurnRecord["endReason"];
  started_at: number;
  ended_at: number | null;
}

export function mapTurnRow(row: TurnRow): TurnRecord {
  return {
    turnId: row.turn_id,
    runId: row.run_id,
    path: row.path,
    visit: row.visit,
    sessionId: row.session_id,
    requestId: row.request_id,
    messageId: row.message_id,
    status: row.status,
    endReason: row.end_reason,
  };
}

export interface MessageRow {
  message_id: string;
  run_id: string;
  session_id: string | null;
  kind: MessageRecord["kind"];
  path: string | null;
  visit: number | null;
  body_hash: string;
  trigger_turn: number;
  status: MessageRecord["status"];
  claim_token: string | null;
  lease_expires_at: number | null;
  created_at: number;
  delivered_at: number | null;
}

export interface LaunchRow {
  launch_id: string;
  run_id: string;
  generation: number;
  command_type: string;
  launch_revision: number;
  pid: number | null;
  exit_kind: "reported" | "lost" | "orphaned" | null;
  exit_phase: string | null;
  exit_code: string | null;
  exit_message: string | null;
  exit_decision: "none" | "relaunch" | "parked" | "failed" | "requeued" | null;
  started_at: number;
  /** The last time the host saw this launch's worker alive (its heartbeat); null before the first. */
  alive_at: number | null;
  ended_at: number | null;
}
