import { z } from "zod";
import {
  generationSchema,
  jsonValueSchema,
  nodePathSchema,
  opaqueIdSchema,
  runIdSchema,
  visitNumberSchema,
} from "./ids.js";

/** The exact checkpoint answer a continuation carries forward. */
export const checkpointAnswerSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  answer: jsonValueSchema,
});
export type CheckpointAnswer = z.infer<typeof checkpointAnswerSchema>;

const fenced = {
  runId: runIdSchema,
  generation: generationSchema,
  claimToken: opaqueIdSchema,
};

/** What the host tells a worker to do: exactly one of these per worker process. */
export const runCommandSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("start"), ...fenced }),
  z.object({
    type: z.literal("resume"),
    ...fenced,
    /** A person accepted the run's changed workflow file (`piw resume --accept-changes`). */
    acceptChanges: z.literal(true).optional(),
  }),
  z.object({
    type: z.literal("continue"),
    ...fenced,
    parentRunId: runIdSchema,
    accepted: checkpointAnswerSchema,
  }),
  z.object({
    type: z.literal("restart"),
    ...fenced,
    parentRunId: runIdSchema,
    restartNumber: z.number().int().min(1),
  }),
]);
export type RunCommand = z.infer<typeof runCommandSchema>;
export type RunCommandType = RunCommand["type"];
