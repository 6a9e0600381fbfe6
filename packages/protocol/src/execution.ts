import { z } from "zod";
import { jsonValueSchema, nodePathSchema, visitNumberSchema } from "./ids.js";
import { checkpointAnswerSchema } from "./run-command.js";
import {
  effectResultSchema,
  nodeKindSchema,
  nodeVisitResultSchema,
  visitDeadlineSchema,
} from "./run-records.js";
import { safeErrorSchema } from "./safe-error.js";

/** A node visit as the engine sees it: open (with its attempt), or finished with its saved result. */
export const nodeVisitStateSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("running"),
    path: nodePathSchema,
    visit: visitNumberSchema,
    attempt: z.number().int(),
    /** The deadline saved when the visit first opened; a reopened visit keeps it. */
    deadline: visitDeadlineSchema.nullable().optional(),
    /** When a wait or the next retry attempt of this visit is due (epoch ms); absent: not scheduled. */
    dueAt: z.number().int().optional(),
    /** How many attempts of this visit failed and were retried (the retry policy's count). */
    failedAttempts: z.number().int().min(0).optional(),
  }),
  z.object({
    status: z.literal("finished"),
    path: nodePathSchema,
    visit: visitNumberSchema,
    attempt: z.number().int(),
    result: nodeVisitResultSchema,
  }),
]);
export type NodeVisitState = z.infer<typeof nodeVisitStateSchema>;

/** A reserved effect: `reserved` means run it (again, for idempotent effects); `settled` carries the result. */
export const effectStateSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("reserved"), effectId: z.string() }),
  z.object({ status: z.literal("settled"), effectId: z.string(), result: effectResultSchema }),
]);
export type EffectState = z.infer<typeof effectStateSchema>;

/** One saved node visit, with its output when it succeeded. */
const savedVisitSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  nodeKind: nodeKindSchema,
  attempt: z.number().int(),
  status: z.enum(["running", "succeeded", "failed", "timed_out"]),
  output: jsonValueSchema.optional(),
  error: safeErrorSchema.optional(),
  nextPath: nodePathSchema.nullable(),
});
export type SavedVisit = z.infer<typeof savedVisitSchema>;

/**
 * Everything an executor needs to rebuild a run's position: its own visits in order, the outputs a
 * continuation carries from its waiting ancestors, and the accepted checkpoint answer.
 */
export const runSnapshotSchema = z.object({
  runId: z.string(),
  input: jsonValueSchema,
  visits: z.array(savedVisitSchema),
  carriedOutputs: z.record(z.string(), jsonValueSchema),
  accepted: checkpointAnswerSchema.nullable(),
  stepCount: z.number().int(),
});
export type RunSnapshot = z.infer<typeof runSnapshotSchema>;
