import type { Budget, RecoveryReason, RunOrigin, RunRecord, SourceIdentity, TurnRecord } from "@piw/protocol";
import type { TableRow } from "./table-columns.js";

// The row types follow the table descriptions in `table-columns.ts`; the mappers to the protocol's
// camelCase records stay here, one per table.

export type RunRow = TableRow<"runs">;

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
    origin: mapOrigin(row),
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
    ...(row.budget_json === null ? {} : { budget: JSON.parse(row.budget_json) as Budget }),
  };
}

function mapOrigin(row: RunRow): RunOrigin {
  if (row.origin_kind === "pi" && row.origin_session !== null)
    return { kind: "pi", sessionId: row.origin_session };
  if (row.origin_kind === "schedule" && row.origin_schedule !== null && row.scheduled_for !== null) {
    return { kind: "schedule", scheduleId: row.origin_schedule, scheduledFor: row.scheduled_for };
  }
  return { kind: "cli" };
}

export type StepRow = TableRow<"run_steps">;

export type EffectRow = TableRow<"effects">;

export type TurnRow = TableRow<"turns">;

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

export type MessageRow = TableRow<"messages">;

export type LaunchRow = TableRow<"worker_launches">;
