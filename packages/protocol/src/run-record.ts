import { z } from "zod";
import { budgetSchema } from "./budget.js";
import { sourceIdentitySchema } from "./run-records.js";
import { runOriginCommandSchema, runOriginSchema } from "./run-status.js";
import {
  isTerminalStatus,
  type RunStatus,
  type TerminalOutcome,
  type TerminalStatus,
} from "./status-sets.js";
import { safeErrorSchema } from "./safe-error.js";
import { recoveryReasonSchema } from "./transition.js";

// A run row as its status allows it to be (the status-table rule): only a `starting` run holds a lease,
// only a parked run has a recovery reason, only an ended run has an outcome and terminal facts. The
// store's reader builds this once from the row; nobody re-derives which field goes with which status.

/** What every run has whatever its status. */
const runFields = {
  runId: z.string(),
  rootRunId: z.string(),
  parentRunId: z.string().nullable(),
  originCommand: runOriginCommandSchema,
  nextCommand: z.enum(["start", "resume", "continue", "restart"]),
  restartNumber: z.number().int(),
  parentTerminalFingerprint: z.string().nullable(),
  workflowName: z.string(),
  source: sourceIdentitySchema,
  definitionDigest: z.string(),
  origin: runOriginSchema,
  generation: z.number().int(),
  revision: z.number().int(),
  progressRevision: z.number().int(),
  launchRevision: z.number().int().nullable(),
  /** A pause was asked for (an active run) or holds (a parked run); never set once a run ended. */
  paused: z.boolean(),
  stepCount: z.number().int(),
  cursor: z.object({ path: z.string(), visit: z.number().int() }).nullable(),
  workingDir: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** When a worker first accepted the run's command; null for a run that never ran. */
  startedAt: z.number().nullable(),
  /** What the run may spend; absent: no budget. */
  budget: budgetSchema.optional(),
};

/** The facts an ended run saved, from which its messages are created later (presentation-after-terminal). */
const endedFields = {
  terminalFingerprint: z.string(),
  presentationState: z.enum(["none", "pending", "created", "failed"]),
  finishedAt: z.number(),
};

/** The lifecycle view of a run row: what callers may know without reading its blobs. */
export const runRecordSchema = z.discriminatedUnion("status", [
  z.object({ ...runFields, status: z.literal("queued") }),
  /** Claimed: the claim holds until `leaseExpiresAt` unless its worker accepts the command first. */
  z.object({ ...runFields, status: z.literal("starting"), leaseExpiresAt: z.number() }),
  /** Claimed, with its command accepted: its worker's life (not a lease) keeps it. */
  z.object({ ...runFields, status: z.literal("running"), startedAt: z.number() }),
  z.object({ ...runFields, status: z.literal("parked"), recoveryReason: recoveryReasonSchema }),
  z.object({
    ...runFields,
    ...endedFields,
    status: z.literal("done"),
    outcome: z.enum(["completed", "waiting"]),
  }),
  z.object({
    ...runFields,
    ...endedFields,
    status: z.literal("failed"),
    outcome: z.enum(["failed", "timed_out"]),
    errorCode: safeErrorSchema.shape.code,
  }),
  z.object({ ...runFields, ...endedFields, status: z.literal("cancelled"), outcome: z.literal("cancelled") }),
]);
export type RunRecord = z.infer<typeof runRecordSchema>;

/** The record of a run in one of these statuses. */
export type RunRecordOf<S extends RunStatus> = Extract<RunRecord, { status: S }>;

/** A run that ended: the phases that carry an outcome and terminal facts. */
export type EndedRunRecord = RunRecordOf<TerminalStatus>;

export function hasRunStatus<S extends RunStatus>(
  run: RunRecord,
  statuses: readonly S[],
): run is RunRecordOf<S> {
  return (statuses as readonly RunStatus[]).includes(run.status);
}

export function isEndedRun(run: RunRecord): run is EndedRunRecord {
  return isTerminalStatus(run.status);
}

/** The run's outcome, or null while it has not ended. */
export function runOutcome(run: RunRecord): TerminalOutcome | null {
  return isEndedRun(run) ? run.outcome : null;
}
