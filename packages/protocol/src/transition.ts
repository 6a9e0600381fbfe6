import { z } from "zod";
import { budgetSchema, budgetSpendSchema } from "./budget.js";
import { nodePathSchema, opaqueIdSchema, runIdSchema } from "./ids.js";
import { runStatusSchema, terminalOutcomeSchema } from "./run-status.js";

/** Why a run is parked, or why an operation found that it must be recovered instead of applied. */
export const recoveryReasonSchema = z.discriminatedUnion("code", [
  // A user or an aborted Pi turn paused the run; an explicit resume continues it.
  z.object({ code: z.literal("paused"), message: z.string().max(512) }),
  // The worker vanished after saving progress: relaunching is meaningful, the host does it.
  z.object({ code: z.literal("worker_lost"), message: z.string().max(512), launchId: opaqueIdSchema }),
  // The worker vanished (while starting or running) and the run made no progress since launch:
  // relaunching would loop, so it waits for an explicit resume. `launchId` names the lost launch; it
  // is absent when a claim expired before any launch was recorded for it.
  z.object({
    code: z.literal("worker_lost_no_progress"),
    message: z.string().max(512),
    launchId: opaqueIdSchema.optional(),
  }),
  // An agent step's turns were lost (Pi crashed, the session ended) or failed at the provider too
  // many times in a row: nothing the model did counts against it, and a resume prompts it again.
  z.object({
    code: z.literal("agent_turns_lost"),
    message: z.string().max(512),
    path: nodePathSchema,
  }),
  // Isolated attempts of one agent step visit ended AGENT_ATTEMPTS_MAX times in a row with their worker
  // lost mid-step: relaunching would call the model again and again, so a person resumes the run.
  z.object({
    code: z.literal("agent_attempts_exhausted"),
    message: z.string().max(512),
    path: nodePathSchema,
    launchId: opaqueIdSchema.optional(),
  }),
  // A resume that accepted the workflow's changes found the saved position does not fit the changed
  // workflow: nothing ran, and a resume on the restored file (or a fixed one) continues the run.
  z.object({ code: z.literal("changes_refused"), message: z.string().max(512) }),
  // A wait node holds the run until `until` (epoch ms); the host wakes it then, with no process meanwhile.
  z.object({
    code: z.literal("waiting"),
    message: z.string().max(512),
    path: nodePathSchema,
    visit: z.number().int().min(1),
    until: z.number().int().min(0),
  }),
  // An attempt of a visit failed and its retry policy allows another: the host wakes the run at `at`
  // for attempt `attempt` of `attempts`. `lastError` is the failed attempt's error code.
  z.object({
    code: z.literal("retry_waiting"),
    message: z.string().max(512),
    path: nodePathSchema,
    visit: z.number().int().min(1),
    attempt: z.number().int().min(2),
    attempts: z.number().int().min(2),
    at: z.number().int().min(0),
    lastError: z.string().max(64),
  }),
  // The run reached a limit of its budget before or during agent step `path`: `limit` names it, `spent`
  // what the run had spent against `budget`. The visit stays open; a resume with a higher budget goes on.
  z.object({
    code: z.literal("budget_exceeded"),
    message: z.string().max(512),
    path: nodePathSchema,
    limit: z.enum(["usd", "tokens", "agentTurns", "wallMs"]),
    spent: budgetSpendSchema,
    budget: budgetSchema,
  }),
  // A manual effect was reserved but never settled: only a person can tell whether it happened.
  z.object({
    code: z.literal("manual_effect_unsettled"),
    message: z.string().max(512),
    effectId: z.string(),
  }),
]);
export type RecoveryReason = z.infer<typeof recoveryReasonSchema>;
export type RecoveryCode = RecoveryReason["code"];

const resourceKindSchema = z.enum(["run", "step", "effect", "turn", "message", "launch", "blob", "schedule"]);

/** What a refused change collided with. Each variant names the exact resource. */
const conflictSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("not_found"), resource: resourceKindSchema, id: z.string() }),
  z.object({
    kind: z.literal("invalid_transition"),
    runId: runIdSchema,
    from: runStatusSchema,
    to: runStatusSchema,
  }),
  z.object({
    kind: z.literal("stale_fence"),
    runId: runIdSchema,
    expectedGeneration: z.number().int(),
    actualGeneration: z.number().int(),
    status: runStatusSchema,
  }),
  z.object({
    kind: z.literal("revision_mismatch"),
    runId: runIdSchema,
    expected: z.number().int(),
    actual: z.number().int(),
  }),
  z.object({ kind: z.literal("session_busy"), sessionId: z.string(), activeRunId: runIdSchema }),
  // The session's last run still owes the model its presentation turn (the one-reservation rule).
  z.object({ kind: z.literal("presentation_pending"), sessionId: z.string(), runId: runIdSchema }),
  z.object({ kind: z.literal("request_mismatch"), resource: resourceKindSchema, id: z.string() }),
  z.object({
    kind: z.literal("state_mismatch"),
    resource: resourceKindSchema,
    id: z.string(),
    expected: z.string(),
    actual: z.string(),
  }),
  z.object({
    kind: z.literal("parent_not_eligible"),
    parentRunId: runIdSchema,
    status: runStatusSchema,
    outcome: terminalOutcomeSchema.nullable(),
    requires: z.enum(["waiting", "terminal"]),
  }),
  z.object({ kind: z.literal("child_exists"), parentRunId: runIdSchema, childRunId: runIdSchema }),
  // The run's launch ended before it ran and its private input was cleared: it cannot be run again.
  z.object({ kind: z.literal("input_cleared"), runId: runIdSchema }),
  z.object({
    kind: z.literal("visit_not_open"),
    runId: runIdSchema,
    path: nodePathSchema,
    visit: z.number(),
  }),
]);
export type Conflict = z.infer<typeof conflictSchema>;

/**
 * The typed outcome of every durable change:
 * - `applied`: this call made the change;
 * - `adopted`: an equal change was already saved, and `value` is that saved result;
 * - `conflict`: the change collides with saved state, described by `evidence`;
 * - `recoveryRequired`: the run must be recovered first; the saved reason says why.
 */
export type Transition<T> =
  | { kind: "applied"; value: T }
  | { kind: "adopted"; value: T }
  | { kind: "conflict"; evidence: Conflict }
  | { kind: "recoveryRequired"; reason: RecoveryReason };

export function transitionSchema<T extends z.ZodType>(value: T) {
  return z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("applied"), value }),
    z.object({ kind: z.literal("adopted"), value }),
    z.object({ kind: z.literal("conflict"), evidence: conflictSchema }),
    z.object({ kind: z.literal("recoveryRequired"), reason: recoveryReasonSchema }),
  ]);
}

export const applied = <T>(value: T): Transition<T> => ({ kind: "applied", value });
export const adopted = <T>(value: T): Transition<T> => ({ kind: "adopted", value });
export const conflict = <T = never>(evidence: Conflict): Transition<T> => ({ kind: "conflict", evidence });
export const recoveryRequired = <T = never>(reason: RecoveryReason): Transition<T> => ({
  kind: "recoveryRequired",
  reason,
});

/** True when the change is saved, whether by this call or an earlier equal one. */
export function isSaved<T>(t: Transition<T>): t is { kind: "applied" | "adopted"; value: T } {
  return t.kind === "applied" || t.kind === "adopted";
}
