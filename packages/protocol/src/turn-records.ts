import { z } from "zod";
import { opaqueIdSchema } from "./ids.js";

// A Pi turn as the host records it (the turn-ownership rule): started at `agent_start`, ended at
// `agent_end`, and the structured output its step's model submits.

export const startTurnSchema = z.object({
  sessionId: opaqueIdSchema,
  requestId: opaqueIdSchema,
  messageId: opaqueIdSchema,
});
export type StartTurn = z.infer<typeof startTurnSchema>;

/**
 * How Pi ended a turn: `error` is a provider failure another turn may get past, `model_unavailable`
 * one it will not (no valid credentials, a model the provider does not know, a spent quota).
 */
export const turnEndReasonSchema = z.enum(["completed", "aborted", "error", "model_unavailable"]);
/**
 * Where the turn's messages are in Pi's own session file: from the step prompt's entry to the last
 * entry of the turn. The host reads just those entries for the viewer; piw never copies the session.
 */
const turnEntriesSchema = z.object({
  sessionFile: z.string().min(1).max(4096),
  firstEntryId: z.string().min(1).max(200),
  lastEntryId: z.string().min(1).max(200),
});
export type TurnEntries = z.infer<typeof turnEntriesSchema>;

export const endTurnSchema = z.object({
  sessionId: opaqueIdSchema,
  requestId: opaqueIdSchema,
  reason: turnEndReasonSchema,
  entries: turnEntriesSchema.optional(),
});
export type EndTurn = z.infer<typeof endTurnSchema>;

/** A workflow turn's usage so far, summed over its model replies by the Pi session that runs it. */
export const turnUsageSchema = z.object({
  sessionId: opaqueIdSchema,
  requestId: opaqueIdSchema,
  tokens: z.number().int().min(0).max(1e12),
  usd: z.number().min(0).max(1e12),
});
export type TurnUsage = z.infer<typeof turnUsageSchema>;

export const turnRecordSchema = z.object({
  turnId: z.string(),
  runId: z.string().nullable(),
  path: z.string().nullable(),
  visit: z.number().int().nullable(),
  sessionId: z.string(),
  requestId: z.string(),
  messageId: z.string(),
  status: z.enum(["open", "ended", "lost", "unowned"]),
  endReason: turnEndReasonSchema.nullable(),
});
export type TurnRecord = z.infer<typeof turnRecordSchema>;

/** The host's answer at Pi `agent_start`: this turn belongs to a workflow step, or to nobody. */
export const turnOwnershipSchema = z.discriminatedUnion("owner", [
  z.object({ owner: z.literal("workflow"), turn: turnRecordSchema }),
  z.object({ owner: z.literal("none"), turn: turnRecordSchema }),
]);
export type TurnOwnership = z.infer<typeof turnOwnershipSchema>;

/** The model's structured output for the step its turn owns. */
export const submitOutputSchema = z.object({ sessionId: opaqueIdSchema, output: z.unknown() });

/** What the model is told about a submission: accepted (the step is done) or why not. */
export const submissionVerdictSchema = z.discriminatedUnion("accepted", [
  z.object({ accepted: z.literal(true), runId: z.string(), path: z.string() }),
  z.object({ accepted: z.literal(false), reason: z.string().max(2048) }),
]);
export type SubmissionResult = z.infer<typeof submissionVerdictSchema>;
