import { z } from "zod";
import { answererSchema } from "./answer-check.js";
import { budgetSchema } from "./budget.js";
import { lazyTable, once } from "./lazy-table.js";
import { PROTOCOL_VERSION } from "./framing.js";
import { type GraphManifest, graphManifestSchema } from "./graph-manifest.js";
import {
  type JsonValue,
  jsonValueSchema,
  nodePathSchema,
  opaqueIdSchema,
  requestKeySchema,
  runIdSchema,
} from "./ids.js";
import { turnProgressSchema } from "./node-progress.js";
import { turnLiveSchema } from "./live-transcript.js";
import type { PushTable } from "./push-table.js";
import { runHistorySchema } from "./run-history.js";
import { messageRecordSchema, reservePreparedRunSchema, resolveManualEffectSchema } from "./run-records.js";
import { runStatusSchema, terminalOutcomeSchema } from "./run-status.js";
import { runSummarySchema, runViewSchema } from "./run-view.js";
import { addScheduleSchema, scheduleIdSchema, scheduleRecordSchema } from "./schedules.js";
import { stepConversationSchema } from "./step-conversation.js";
import { transitionSchema } from "./transition.js";
import {
  endTurnSchema,
  startTurnSchema,
  submissionVerdictSchema,
  submitOutputSchema,
  turnOwnershipSchema,
  turnRecordSchema,
  turnUsageSchema,
} from "./turn-records.js";

const runRef = z.object({ runId: runIdSchema });
const scheduleRef = z.object({ scheduleId: scheduleIdSchema });
// A method that creates a run carries the client's key for the user action (see `lostReplyPolicy`).
const keyed = { requestKey: requestKeySchema };
const runTransition = once(() => transitionSchema(runSummarySchema));
/**
 * A reserve's manifest is checked here, once, as a compiled graph manifest (which is JSON by its
 * schema); callers hold it as the JSON their preflight produced, and the store saves it as that.
 */
const reservedManifestSchema = graphManifestSchema as unknown as z.ZodType<GraphManifest, JsonValue>;

/** Who is talking to the host; the host adapts nothing to it, but logs and `host.status` show it. */
const clientKindSchema = z.enum(["cli", "extension", "viewer", "test"]);

/**
 * Client protocol v1: every method's params and result. The host parses params with these schemas
 * at the boundary; the client parses results with them. A method missing here does not exist.
 */
export const clientMethods = lazyTable({
  hello: () => ({
    params: z.object({
      protocol: z.number().int(),
      client: clientKindSchema,
      pid: z.number().int().optional(),
      /**
       * From the extension: the folder of the Pi SDK package that its Pi process runs. The host
       * checks it (see `checkPiSdkDir`) and gives it to workers for isolated agent steps.
       */
      piSdk: z.string().min(1).max(4096).optional(),
      /** The client is about to launch a run (`piw run`): the host wakes its idle worker now. */
      launching: z.boolean().optional(),
    }),
    result: z.object({
      protocol: z.literal(PROTOCOL_VERSION),
      hostPid: z.number().int(),
      stateDir: z.string(),
      version: z.string(),
    }),
  }),
  "runs.reserve": () => ({
    // The host allocates the final run ID; everything else was settled by the caller's preflight.
    params: reservePreparedRunSchema
      .omit({ runId: true })
      .extend({ ...keyed, manifest: reservedManifestSchema }),
    result: runTransition(),
  }),
  "runs.get": () => ({ params: runRef, result: runViewSchema.nullable() }),
  /** What a viewer replays and inspects beyond the view: trace, outputs, effects, messages, turns. */
  "runs.history": () => ({ params: runRef, result: runHistorySchema.nullable() }),
  /** What the agent said and did in one step: its prompt, text, tool calls and submits. */
  "runs.conversation": () => ({
    params: runRef.extend({ path: nodePathSchema }),
    result: stepConversationSchema.nullable(),
  }),
  "runs.list": () => ({
    params: z.object({
      statuses: z.array(runStatusSchema).optional(),
      /** With statuses, a run matches when its status or its outcome is listed. */
      outcomes: z.array(terminalOutcomeSchema).optional(),
      sessionId: opaqueIdSchema.optional(),
      /** Only the runs this schedule's firings made. */
      scheduleId: scheduleIdSchema.optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    }),
    result: z.array(runSummarySchema),
  }),
  // `by` is set by the client's code path: a cancel by the model itself earns it no follow-up turn.
  "runs.cancel": () => ({
    params: runRef.extend({ by: answererSchema.optional() }),
    result: runTransition(),
  }),
  "runs.pause": () => ({ params: runRef, result: runTransition() }),
  "runs.resume": () => ({
    // `acceptChanges`: resume on the workflow file as it is now, if the saved position fits it.
    // `budget`: limits put in place of the saved ones before the run goes on (a budget-parked run).
    params: runRef.extend({ acceptChanges: z.boolean().optional(), budget: budgetSchema.optional() }),
    result: runTransition(),
  }),
  "runs.answer": () => ({
    // `answerer` is set by the client's code path (the model's tool or a person's command), never
    // taken from the model's arguments: the host refuses an answer the checkpoint does not allow.
    params: z.object({ runId: runIdSchema, answer: jsonValueSchema, answerer: answererSchema, ...keyed }),
    result: runTransition(),
  }),
  "runs.restart": () => ({ params: runRef.extend(keyed), result: runTransition() }),
  /** Settle the unsettled manual effect a parked run stopped at, then resume the run. */
  "runs.resolveEffect": () => ({ params: resolveManualEffectSchema, result: runTransition() }),
  /** Schedules: the host checks the timing, saves the schedule and fires it on its one clock. */
  "schedules.add": () => ({ params: addScheduleSchema, result: transitionSchema(scheduleRecordSchema) }),
  "schedules.list": () => ({ params: z.object({}), result: z.array(scheduleRecordSchema) }),
  "schedules.pause": () => ({
    params: scheduleRef.extend({ note: z.string().max(512).optional() }),
    result: transitionSchema(scheduleRecordSchema),
  }),
  "schedules.resume": () => ({ params: scheduleRef, result: transitionSchema(scheduleRecordSchema) }),
  "schedules.delete": () => ({ params: scheduleRef, result: transitionSchema(scheduleRecordSchema) }),
  /** Fire now, for now, under the schedule's overlap policy; replies once the firing is saved. */
  "schedules.trigger": () => ({
    params: scheduleRef,
    result: transitionSchema(z.object({ schedule: scheduleRecordSchema, run: runSummarySchema.nullable() })),
  }),
  /** Subscribe to pushed `run.view` frames: one run, or every run when `runId` is absent. */
  /**
   * Follow one run (`runId`), the runs of one Pi session (`sessionId`: only those runs' views are
   * sent), or, with neither, every run.
   */
  "runs.subscribe": () => ({
    params: z
      .object({ runId: runIdSchema.optional(), sessionId: opaqueIdSchema.optional() })
      .refine((p) => p.runId === undefined || p.sessionId === undefined, {
        message: "subscribe to a run or to a session, not both",
      }),
    result: z.object({ subscriptionId: z.string() }),
  }),
  "runs.unsubscribe": () => ({
    params: z.object({ subscriptionId: z.string() }),
    result: z.object({ ok: z.literal(true) }),
  }),
  /** The activation boundary for Pi runs: the session is idle (the idle-activation rule). */
  "session.settled": () => ({
    params: z.object({ sessionId: opaqueIdSchema }),
    result: z.object({ activated: z.array(runIdSchema) }),
  }),
  /** Pi `agent_start`: does the workflow message that started this turn own it? (the turn-ownership rule) */
  "turns.start": () => ({ params: startTurnSchema, result: transitionSchema(turnOwnershipSchema) }),
  /** Pi `agent_end`: end exactly the turn that was accepted. An `aborted` end pauses its run. */
  "turns.end": () => ({ params: endTurnSchema, result: transitionSchema(turnRecordSchema) }),
  /** Nothing can prove the session's open turns any more (a reconnect, a new Pi process): lost. */
  "turns.settle": () => ({
    params: z.object({ sessionId: opaqueIdSchema }),
    result: transitionSchema(z.array(turnRecordSchema)),
  }),
  /** The model's output for the step that owns the session's open turn; waits for the verdict. */
  "turns.submit": () => ({ params: submitOutputSchema, result: submissionVerdictSchema }),
  /** The model's progress on the step its open turn runs (the workflow tool's `update`). */
  "turns.update": () => ({
    params: turnProgressSchema,
    result: z.object({ runId: runIdSchema, path: z.string(), visit: z.number().int() }),
  }),
  /**
   * What the model said and did so far in the session's open workflow turn (the latest entries, sent
   * at most a few times a second); the host holds it in memory for the step's live conversation.
   * `held: false` when no workflow step owns the session's open turn (nothing is kept).
   */
  "turns.live": () => ({ params: turnLiveSchema, result: z.object({ held: z.boolean() }) }),
  /**
   * What the model used so far in the session's open workflow turn (sums over the turn's replies, so a
   * resend is harmless). `stop` is set when the run's budget is reached: the extension aborts the turn.
   */
  "turns.usage": () => ({
    params: turnUsageSchema,
    result: z.object({ stop: z.string().max(512).nullable() }),
  }),
  "messages.claim": () => ({
    params: z.object({ sessionId: opaqueIdSchema, limit: z.number().int().min(1).max(500).optional() }),
    result: transitionSchema(z.array(messageRecordSchema)),
  }),
  "messages.delivered": () => ({
    params: z.object({ messageId: opaqueIdSchema }),
    result: transitionSchema(messageRecordSchema),
  }),
  /** A claimed message the extension could not send (Pi started a turn first): pending again. */
  "messages.release": () => ({
    params: z.object({ sessionId: opaqueIdSchema, messageId: opaqueIdSchema }),
    result: transitionSchema(messageRecordSchema),
  }),
  "host.status": () => ({
    params: z.object({}).optional(),
    result: z.object({
      pid: z.number().int(),
      version: z.string(),
      stateDir: z.string(),
      startedAt: z.number(),
      synchronous: z.enum(["FULL", "NORMAL"]),
      workers: z.array(
        z.object({ runId: runIdSchema, launchId: z.string(), pid: z.number().int().nullable() }),
      ),
      runs: z.record(runStatusSchema, z.number().int()),
      /** The pre-started worker waiting for the next activation; it belongs to no run. */
      idleWorkerPid: z.number().int().nullable().optional(),
    }),
  }),
  "host.stop": () => ({ params: z.object({}).optional(), result: z.object({ stopping: z.literal(true) }) }),
});

export type ClientMethod = keyof typeof clientMethods;
export type ClientParams<M extends ClientMethod> = z.input<(typeof clientMethods)[M]["params"]>;
export type ClientResult<M extends ClientMethod> = z.infer<(typeof clientMethods)[M]["result"]>;

/**
 * What a client may do when its connection dies after a request went out and before the reply came,
 * so it cannot know whether the host applied it:
 * - `keyed`: it creates a run, under the client's `requestKey`; sent again with the same key it
 *   answers with the run the first send made (`adopted`), so the client sends it again;
 * - `resend`: a read, or a change whose repeat is adopted (a cancel): the client sends it again;
 * - `report`: a repeat could answer differently from the first send (a resume that already claimed
 *   the run, a claim of messages, a turn report the reconnect renews anyway): the caller is told.
 */
export type LostReplyPolicy = "keyed" | "resend" | "report";

export const lostReplyPolicy = {
  hello: "report",
  "runs.reserve": "keyed",
  "runs.get": "resend",
  "runs.history": "resend",
  "runs.conversation": "resend",
  "runs.list": "resend",
  "runs.cancel": "resend",
  "runs.pause": "report",
  "runs.resume": "report",
  "runs.answer": "keyed",
  "runs.restart": "keyed",
  "runs.resolveEffect": "report",
  "schedules.add": "resend",
  "schedules.list": "resend",
  "schedules.pause": "resend",
  "schedules.resume": "resend",
  "schedules.delete": "report",
  "schedules.trigger": "report",
  "runs.subscribe": "report",
  "runs.unsubscribe": "report",
  "session.settled": "report",
  "turns.start": "report",
  "turns.end": "report",
  "turns.settle": "report",
  "turns.submit": "report",
  "turns.update": "resend",
  "turns.live": "resend",
  "turns.usage": "resend",
  "messages.claim": "report",
  "messages.delivered": "report",
  "messages.release": "report",
  "host.status": "resend",
  "host.stop": "report",
} as const satisfies { [M in ClientMethod]: LostReplyPolicy };

/** The methods that create a run and so carry a `requestKey`. */
export type KeyedMethod = {
  [M in ClientMethod]: (typeof lostReplyPolicy)[M] extends "keyed" ? M : never;
}[ClientMethod];

/** Pushes from host to clients. A client pushes nothing to the host: all it says is a method. */
export const clientPushes = {
  "run.view": z.object({ subscriptionId: z.string(), view: runViewSchema }),
} as const satisfies PushTable;
