import { z } from "zod";
import { budgetSchema } from "./budget.js";
import { SEVEN_DAYS_MS } from "./durations.js";
import { NODE_KINDS } from "./node-kinds.js";
import { answerCheckSchema, answeredBySchema, answererSchema } from "./answer-check.js";
import {
  generationSchema,
  jsonValueSchema,
  nodePathSchema,
  opaqueIdSchema,
  requestKeySchema,
  revisionSchema,
  runIdSchema,
  visitNumberSchema,
} from "./ids.js";
import { checkpointAnswerSchema } from "./run-command.js";
import { runEnvSchema } from "./run-env.js";
import { runOriginSchema } from "./run-status.js";
import { safeErrorSchema } from "./safe-error.js";

/** Where a workflow definition came from: a file (path + sha256) or a built-in (id + revision). */
export const sourceIdentitySchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("file"),
    path: z.string().min(1).max(4096),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  z.object({
    kind: z.literal("builtin"),
    id: z.string().min(1).max(200),
    revision: z.string().min(1).max(200),
  }),
]);
export type SourceIdentity = z.infer<typeof sourceIdentitySchema>;

/** Proof that the caller holds the run's current claim. `expectedRevision` adds optimistic concurrency. */
export const fenceSchema = z.object({
  runId: runIdSchema,
  generation: generationSchema,
  claimToken: opaqueIdSchema,
  expectedRevision: revisionSchema.optional(),
});
export type Fence = z.infer<typeof fenceSchema>;

/**
 * Which ends of a run the model that started it is told of in a follow-up turn (a workflow's
 * `notifyModel`). A run started by a person, or from outside Pi, tells the model nothing.
 */
export const modelNoticesSchema = z.object({ onFailure: z.boolean(), onCancel: z.boolean() });
export type ModelNotices = z.infer<typeof modelNoticesSchema>;

/** Everything preflight settled before a run is queued (the launch preflight rule). */
export const reservePreparedRunSchema = z.object({
  runId: runIdSchema,
  workflowName: z.string().min(1).max(200),
  source: sourceIdentitySchema,
  definitionDigest: z.string().min(1).max(200),
  manifest: jsonValueSchema,
  input: jsonValueSchema,
  origin: runOriginSchema,
  presentationInstructions: z
    .string()
    .max(64 * 1024)
    .optional(),
  /** Where the run's commands run: the CLI's directory or the Pi session's project. */
  workingDir: z.string().min(1).max(4096).optional(),
  /** Set only when the model started the run: which of its ends get a follow-up turn. */
  notifyModel: modelNoticesSchema.optional(),
  /** The client's key for this start; the same key with the same request adopts the saved run. */
  requestKey: requestKeySchema.optional(),
  /** What the run may spend: the workflow's own budget with the start's `--budget` over it. */
  budget: budgetSchema.optional(),
  /**
   * The starting client's environment, which the run's commands start from (private, like the input).
   * Not part of the request's identity: a resent start adopts its run whatever environment it carries.
   * Absent: the commands see the host's environment.
   */
  env: runEnvSchema.optional(),
});
export type ReservePreparedRun = z.infer<typeof reservePreparedRunSchema>;

/**
 * A run's changed workflow, accepted by a person and checked by the worker against the saved
 * position: the same workflow name, its new source identity, digest and manifest.
 */
export const redefineRunSchema = reservePreparedRunSchema.pick({
  workflowName: true,
  source: true,
  definitionDigest: true,
  manifest: true,
});
export type RedefineRun = z.infer<typeof redefineRunSchema>;

export const nodeKindSchema = z.enum(NODE_KINDS);
export type NodeKind = z.infer<typeof nodeKindSchema>;

/**
 * The longest a node may wait (7 days): its deadline, and a retry's pause. The engine compiles
 * workflows to it and the store refuses more; longer waits belong to a checkpoint.
 */
export const MAX_NODE_TIMEOUT_MS = SEVEN_DAYS_MS;

export const startNodeVisitSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  nodeKind: nodeKindSchema,
  /** The visit's deadline length; the store saves `started + timeoutMs` on the first attempt only. */
  timeoutMs: z.number().int().min(1).max(MAX_NODE_TIMEOUT_MS).nullable().optional(),
  /**
   * A parallel or map branch's start: when a pause was asked for, the store refuses it with
   * `recoveryRequired` (paused) without parking the run, so that the fork lets its other branches
   * finish their visits and parks the run itself once every branch is at rest.
   */
  holdOnPause: z.literal(true).optional(),
});

/** A visit's saved deadline: its length and the absolute time (epoch ms) it passes. */
export const visitDeadlineSchema = z.object({ timeoutMs: z.number().int(), at: z.number().int() });
export type VisitDeadline = z.infer<typeof visitDeadlineSchema>;
export type StartNodeVisit = z.infer<typeof startNodeVisitSchema>;

/** How one node visit ended. `next` is the path the run moves to, or null at an exit. */
/**
 * A failed or timed-out visit that an outcome route took carries the node it goes to (`next`) and, for
 * a shell node's non-ok exit, the command's report (`output`); an unrouted one has neither and ends the run.
 */
const failureRouteFields = {
  error: safeErrorSchema,
  next: nodePathSchema.optional(),
  output: jsonValueSchema.optional(),
};

export const nodeVisitResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), output: jsonValueSchema, next: nodePathSchema.nullable() }),
  z.object({ status: z.literal("failed"), ...failureRouteFields }),
  z.object({ status: z.literal("timed_out"), ...failureRouteFields }),
]);
export type NodeVisitResult = z.infer<typeof nodeVisitResultSchema>;

export const finishNodeVisitSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  result: nodeVisitResultSchema,
});
export type FinishNodeVisit = z.infer<typeof finishNodeVisitSchema>;

export const effectModeSchema = z.enum(["idempotent", "manual"]);

/** The engine derives `effectId` from the node visit, the effect type and its ordinal. */
export const reserveEffectSchema = z.object({
  effectId: z.string().min(1).max(800),
  path: nodePathSchema,
  visit: visitNumberSchema,
  effectType: z.string().min(1).max(200),
  ordinal: z.number().int().min(0),
  mode: effectModeSchema,
  request: jsonValueSchema,
});
export type ReserveEffect = z.infer<typeof reserveEffectSchema>;

export const effectResultSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), value: jsonValueSchema }),
  z.object({ ok: z.literal(false), error: safeErrorSchema }),
]);
export type EffectResult = z.infer<typeof effectResultSchema>;

export const settleEffectSchema = z.object({
  effectId: z.string().min(1).max(800),
  result: effectResultSchema,
});
export type SettleEffect = z.infer<typeof settleEffectSchema>;

/** How a run ends from `running` (or, for a launch failure, from `starting`). */
export const runEndingSchema = z.discriminatedUnion("outcome", [
  z.object({ outcome: z.literal("completed"), output: jsonValueSchema }),
  z.object({
    outcome: z.literal("waiting"),
    checkpoint: z.object({
      path: nodePathSchema,
      visit: visitNumberSchema,
      prompt: z.string().max(64 * 1024),
      /** Who may answer; absent (a run saved before this was recorded) means `human`. */
      answeredBy: answeredBySchema.optional(),
      /** The answer's JSON Schema as people and the model see it (not the host's check). */
      answerSchema: z.record(z.string(), jsonValueSchema).optional(),
    }),
    /** What the host checks of an answer before it saves a continuation. */
    answerCheck: answerCheckSchema,
    /**
     * An approval gate's deadline: when it passes unanswered, the host's clock continues the run with
     * `answer` (the gate's default, marked automatic) as an automatic answer, never a person's.
     */
    timeout: z.object({ at: z.number().int().min(0), answer: jsonValueSchema }).optional(),
  }),
  z.object({ outcome: z.literal("failed"), error: safeErrorSchema }),
  z.object({ outcome: z.literal("timed_out"), error: safeErrorSchema }),
]);
export type RunEnding = z.infer<typeof runEndingSchema>;

export const prepareContinuationSchema = z.object({
  runId: runIdSchema,
  parentRunId: runIdSchema,
  /** The answer, and the checkpoint visit it answers; without one, the checkpoint the parent waits at. */
  accepted: checkpointAnswerSchema.partial({ path: true, visit: true }),
  /**
   * Who answers: the checkpoint's `answeredBy` refuses anyone else. `automatic` is the host's clock
   * taking an approval gate's saved default at its deadline; no client can send it.
   */
  answerer: z.union([answererSchema, z.literal("automatic")]),
  requestKey: requestKeySchema.optional(),
});
export type PrepareContinuation = z.infer<typeof prepareContinuationSchema>;

export const prepareRestartSchema = z.object({
  runId: runIdSchema,
  parentRunId: runIdSchema,
  requestKey: requestKeySchema.optional(),
});
export type PrepareRestart = z.infer<typeof prepareRestartSchema>;

export const messageKindSchema = z.enum([
  "step_prompt",
  "notify",
  "launch_failure",
  "terminal",
  "presentation",
]);
export type MessageKind = z.infer<typeof messageKindSchema>;

/** A message the worker asks to deliver to the run's Pi session. Its ID is derived, never counted. */
export const enqueueMessageSchema = z.object({
  messageId: opaqueIdSchema,
  kind: z.enum(["step_prompt", "notify"]),
  path: nodePathSchema,
  visit: visitNumberSchema,
  body: z.string().max(256 * 1024),
  triggerTurn: z.boolean(),
});
export type EnqueueMessage = z.infer<typeof enqueueMessageSchema>;

/**
 * A person's word on the manual effect a parked run stopped at (`manual_effect_unsettled`): it
 * happened, with the value the action would have returned, or it did not and should be performed.
 */
export const resolveManualEffectSchema = z.discriminatedUnion("happened", [
  z.object({
    runId: runIdSchema,
    effectId: z.string().min(1).max(512),
    happened: z.literal(true),
    value: jsonValueSchema,
  }),
  z.object({ runId: runIdSchema, effectId: z.string().min(1).max(512), happened: z.literal(false) }),
]);
export type ResolveManualEffect = z.infer<typeof resolveManualEffectSchema>;

/** A message of the host's outbox to one Pi session, as the deliverer sees it. */
export const messageRecordSchema = z.object({
  messageId: z.string(),
  runId: z.string(),
  sessionId: z.string().nullable(),
  kind: messageKindSchema,
  path: z.string().nullable(),
  visit: z.number().int().nullable(),
  body: z.string(),
  triggerTurn: z.boolean(),
  status: z.enum(["pending", "claimed", "delivered", "cancelled"]),
  createdAt: z.number(),
  deliveredAt: z.number().nullable(),
});
export type MessageRecord = z.infer<typeof messageRecordSchema>;

export const workerExitSchema = z.discriminatedUnion("kind", [
  // The worker said why it stopped; `error` is set when it stopped because of a failure.
  z.object({
    kind: z.literal("reported"),
    phase: z.enum(["bootstrap", "execute", "shutdown"]),
    error: safeErrorSchema.optional(),
  }),
  // The process ended without a report (killed, crashed, lost its channel).
  z.object({ kind: z.literal("lost"), detail: z.string().max(512) }),
  // The host that launched it died (a new host holds the lock), so the worker died with its channel.
  z.object({ kind: z.literal("orphaned"), detail: z.string().max(512) }),
]);
export type WorkerExit = z.infer<typeof workerExitSchema>;

/** What the host must do after a worker exit; the store decides it with the progress rule. */
export const workerExitDecisionSchema = z.enum(["none", "relaunch", "parked", "failed", "requeued"]);
export type WorkerExitDecision = z.infer<typeof workerExitDecisionSchema>;

/** One run's saved ending, read from typed columns only (typed-readers rule: text is never JSON). */
export type TerminalFact =
  | { runId: string; workflowName: string; outcome: "completed"; output: z.infer<typeof jsonValueSchema> }
  | {
      runId: string;
      workflowName: string;
      outcome: "waiting";
      checkpoint: {
        path: string;
        visit: number;
        prompt: string;
        /** Who may answer; `human` for a run saved before this was recorded. */
        answeredBy: z.infer<typeof answeredBySchema>;
        answerSchema: Record<string, z.infer<typeof jsonValueSchema>> | null;
      };
    }
  | {
      runId: string;
      workflowName: string;
      outcome: "failed" | "timed_out";
      error: z.infer<typeof safeErrorSchema>;
      duringLaunch: boolean;
    }
  | { runId: string; workflowName: string; outcome: "cancelled" };

/** The run's own fact and those of its ancestors, nearest parent first. */
export interface TerminalFacts {
  run: TerminalFact;
  fingerprint: string;
  ancestors: TerminalFact[];
}
