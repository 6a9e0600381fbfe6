import type {
  Budget,
  RecoveryReason,
  RunOrigin,
  RunRecord,
  SourceIdentity,
  TerminalOutcome,
  TurnRecord,
} from "@piw/protocol";
import { StoreError } from "./errors.js";
import type { TableRow } from "./table-columns.js";

// The row types follow the table descriptions in `table-columns.ts`; the mappers to the protocol's
// camelCase records stay here, one per table.

export type RunRow = TableRow<"runs">;

/** A column the row's status requires; a row without it breaks the status-table rule. */
function required<T>(row: RunRow, column: string, value: T | null): T {
  if (value === null) {
    throw new StoreError("invalid_record", `Run ${row.run_id} is ${row.status} without its ${column}.`);
  }
  return value;
}

function outcomeOf<T extends TerminalOutcome>(row: RunRow, allowed: readonly T[]): T {
  const outcome = allowed.find((o) => o === row.outcome);
  if (outcome === undefined) {
    throw new StoreError("invalid_record", `Run ${row.run_id} is ${row.status} with outcome ${row.outcome}.`);
  }
  return outcome;
}

/** The run row read once into the record of its status (the status-table rule). */
export function mapRunRow(row: RunRow): RunRecord {
  const run = {
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
    generation: row.generation,
    revision: row.revision,
    progressRevision: row.progress_revision,
    launchRevision: row.launch_revision,
    paused: row.paused === 1,
    stepCount: row.step_count,
    cursor:
      row.cursor_path !== null && row.cursor_visit !== null
        ? { path: row.cursor_path, visit: row.cursor_visit }
        : null,
    workingDir: row.working_dir,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    ...(row.budget_json === null ? {} : { budget: JSON.parse(row.budget_json) as Budget }),
  };
  const ended = () => ({
    terminalFingerprint: required(row, "terminal fingerprint", row.terminal_fingerprint),
    presentationState: row.presentation_state,
    finishedAt: required(row, "finish time", row.finished_at),
  });
  switch (row.status) {
    case "queued":
      return { ...run, status: "queued" };
    case "starting":
      return { ...run, status: "starting", leaseExpiresAt: required(row, "lease", row.lease_expires_at) };
    case "running":
      return { ...run, status: "running", startedAt: required(row, "start time", row.started_at) };
    case "parked": {
      const reason = required(row, "recovery reason", row.recovery_reason);
      return { ...run, status: "parked", recoveryReason: JSON.parse(reason) as RecoveryReason };
    }
    case "done":
      return {
        ...run,
        ...ended(),
        status: "done",
        outcome: outcomeOf(row, ["completed", "waiting"] as const),
      };
    case "failed":
      return {
        ...run,
        ...ended(),
        status: "failed",
        outcome: outcomeOf(row, ["failed", "timed_out"] as const),
        errorCode: required(row, "error code", row.error_code),
      };
    case "cancelled":
      return { ...run, ...ended(), status: "cancelled", outcome: outcomeOf(row, ["cancelled"] as const) };
    default:
      return row.status satisfies never;
  }
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
