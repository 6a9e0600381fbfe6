import { z } from "zod";
import { jsonValueSchema, nodePathSchema, runIdSchema } from "./ids.js";
import { messageKindSchema } from "./run-records.js";
import { traceEventSchema } from "./trace-events.js";

// What `runs.history` returns: the recorded trace a viewer replays, and what its inspector shows
// for each node. Every value is bounded by the host: long strings, arrays and objects are folded, and
// a fold says how much it left out.

/** One entry of the run's append-only trace: where it sits in the trace, when, and which event. */
export const historyEventSchema = z.object({ seq: z.number().int(), at: z.number() }).and(traceEventSchema);
export type HistoryEvent = z.infer<typeof historyEventSchema>;

/**
 * One saved attempt-visit of a node, with its output (JSON, folded) or its error (text, bounded). A
 * visit still open when its run stopped has the state the view gives it (`stoppedVisitState`):
 * cancelled, timed out, paused, or pending.
 */
const historyStepSchema = z.object({
  path: nodePathSchema,
  visit: z.number().int(),
  attempt: z.number().int(),
  status: z.enum(["pending", "running", "succeeded", "failed", "timed_out", "cancelled", "paused"]),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  errorCode: z.string().nullable(),
  error: z.string().nullable(),
  output: jsonValueSchema.nullable(),
});
export type HistoryStep = z.infer<typeof historyStepSchema>;

const historyEffectSchema = z.object({
  effectId: z.string(),
  path: nodePathSchema,
  visit: z.number().int(),
  effectType: z.string(),
  ordinal: z.number().int(),
  mode: z.enum(["idempotent", "manual"]),
  status: z.enum(["reserved", "settled", "failed"]),
  request: jsonValueSchema,
  result: jsonValueSchema.nullable(),
  errorCode: z.string().nullable(),
  error: z.string().nullable(),
  reservedAt: z.number(),
  settledAt: z.number().nullable(),
});
export type HistoryEffect = z.infer<typeof historyEffectSchema>;

/** A message the run sent towards Pi: step prompts, notifications, terminal and launch reports. */
const historyMessageSchema = z.object({
  messageId: z.string(),
  kind: messageKindSchema,
  path: nodePathSchema.nullable(),
  visit: z.number().int().nullable(),
  status: z.enum(["pending", "claimed", "delivered", "cancelled"]),
  body: z.string(),
  createdAt: z.number(),
  deliveredAt: z.number().nullable(),
});
export type HistoryMessage = z.infer<typeof historyMessageSchema>;

const historyTurnSchema = z.object({
  turnId: z.string(),
  path: nodePathSchema.nullable(),
  visit: z.number().int().nullable(),
  status: z.enum(["open", "ended", "lost", "unowned"]),
  endReason: z.string().nullable(),
  startedAt: z.number(),
  endedAt: z.number().nullable(),
});
export type HistoryTurn = z.infer<typeof historyTurnSchema>;

export const runHistorySchema = z.object({
  runId: runIdSchema,
  /** The run's revision when this was read: a newer view means the history is stale. */
  revision: z.number().int(),
  events: z.array(historyEventSchema),
  /** Events left out at the start, when the trace is longer than one reply carries. */
  eventsOmitted: z.number().int().min(0),
  steps: z.array(historyStepSchema),
  effects: z.array(historyEffectSchema),
  messages: z.array(historyMessageSchema),
  turns: z.array(historyTurnSchema),
});
export type RunHistory = z.infer<typeof runHistorySchema>;
