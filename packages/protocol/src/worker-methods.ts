import { z } from "zod";
import { runEnvSchema } from "./run-env.js";
import { agentProgressSchema } from "./agent-progress.js";
import { agentLiveSchema } from "./live-transcript.js";
import { budgetSchema, budgetSpendSchema } from "./budget.js";
import { effectStateSchema, nodeVisitStateSchema, runSnapshotSchema } from "./execution.js";
import { nodePathSchema, visitNumberSchema } from "./ids.js";
import { advanceNodeVisitSchema, nodeVisitAdvanceSchema } from "./node-advance.js";
import { quickVisitAdvance, quickVisitTransition } from "./visit-transition-check.js";
import { quickAdvanceParams, quickFinishParams, quickStartParams } from "./visit-request-check.js";
import { nodeProgressReportSchema } from "./node-progress.js";
import type { PushTable } from "./push-table.js";
import { runCommandSchema } from "./run-command.js";
import {
  enqueueMessageSchema,
  finishNodeVisitSchema,
  messageRecordSchema,
  reserveEffectSchema,
  redefineRunSchema,
  runEndingSchema,
  settleEffectSchema,
  startNodeVisitSchema,
  workerExitSchema,
} from "./run-records.js";
import { runRecordSchema } from "./run-record.js";
import { recoveryReasonSchema, transitionSchema } from "./transition.js";

/**
 * How an agent step's turn ended without an accepted submission. Only `completed` (the model ended
 * its turn normally) counts against the step's reminder budget; `error` (the provider failed the
 * assistant message) and `lost` (Pi crashed, the session ended or the host settled the turn as
 * unproved) are not the model's doing and have their own bound. `model_unavailable` (the provider
 * refused the model for good) fails the step at once.
 */
const agentTurnEndingSchema = z.enum(["completed", "error", "lost", "model_unavailable"]);
export type AgentTurnEnding = z.infer<typeof agentTurnEndingSchema>;

/**
 * Worker protocol: the client framing over the worker's stdin/stdout. The host assigned the worker
 * to one claim, so no method carries a fence: the host applies the launch's own fence to every call.
 */
export const workerMethods = {
  /**
   * The first call: which command to run, and everything the worker reads before it accepts it (the
   * saved run, which names the workflow's source) and before its first node (the run's snapshot),
   * so that start-up is this call and `run.markRunning`. The snapshot cannot change in between: the
   * run is claimed for this launch, and `run.markRunning` only changes its status.
   */
  "worker.hello": {
    params: z.object({ launchId: z.string(), pid: z.number().int() }),
    result: z.object({
      command: runCommandSchema,
      run: runRecordSchema,
      snapshot: runSnapshotSchema,
      /** The entry file of Pi's SDK as a connected Pi reported it (checked by the host), if any. */
      piSdkEntry: z.string().min(1).max(4096).optional(),
      /**
       * The environment saved with the run (its starting client's): the worker runs the run's
       * commands and workflow code in it. Absent: the run saved none, and the worker keeps its own.
       */
      env: runEnvSchema.optional(),
    }),
  },
  "run.markRunning": { params: z.object({}).optional(), result: transitionSchema(runRecordSchema) },
  // The params a host and the replies a worker receive once per node are taken by zod-free checks first
  // (see visit-request-check.ts and visit-transition-check.ts).
  "visit.start": {
    params: startNodeVisitSchema,
    result: transitionSchema(nodeVisitStateSchema),
    quickParams: quickStartParams,
    quickResult: quickVisitTransition,
  },
  "visit.finish": {
    params: finishNodeVisitSchema,
    result: transitionSchema(nodeVisitStateSchema),
    quickParams: quickFinishParams,
    quickResult: quickVisitTransition,
  },
  /** `visit.finish` and the next `visit.start` in one transaction (see node-advance.ts). */
  "visit.advance": {
    params: advanceNodeVisitSchema,
    result: transitionSchema(nodeVisitAdvanceSchema),
    quickParams: quickAdvanceParams,
    quickResult: quickVisitAdvance,
  },
  "effect.reserve": { params: reserveEffectSchema, result: transitionSchema(effectStateSchema) },
  "effect.settle": { params: settleEffectSchema, result: transitionSchema(effectStateSchema) },
  "message.enqueue": { params: enqueueMessageSchema, result: transitionSchema(messageRecordSchema) },
  "run.finish": { params: runEndingSchema, result: transitionSchema(runRecordSchema) },
  "run.park": { params: recoveryReasonSchema, result: transitionSchema(runRecordSchema) },
  /** A wait or retry reason's schedule saved on its open visit, without parking (a parallel branch). */
  "visit.schedule": { params: recoveryReasonSchema, result: transitionSchema(runRecordSchema) },
  /** Point the run at its changed workflow, which the worker checked against the saved position. */
  "run.redefine": { params: redefineRunSchema, result: transitionSchema(runRecordSchema) },
  /**
   * The run's budget against its live spend: what is saved, plus the unsaved usage of every isolated
   * session of the run that the host heard of (`pending` with `session` replaces that session's
   * last report; without `session` it is added once), before an agent turn starts or while one runs.
   * At a limit the store parks the run (`budget_exceeded`, the visit stays open) and replies
   * `recoveryRequired`.
   */
  "budget.check": {
    params: z.object({
      path: nodePathSchema,
      visit: visitNumberSchema,
      when: z.enum(["before_turn", "during_turn"]),
      pending: budgetSpendSchema.partial(),
      /** The isolated session whose usage `pending` is: its record's effect ID, which saving the record clears. */
      session: z.string().min(1).max(800).optional(),
      /** Only answer, never park: an isolated session asks, stops, saves its record, then parks. */
      askOnly: z.boolean().optional(),
    }),
    result: transitionSchema(
      z.object({
        budget: budgetSchema.nullable(),
        spend: budgetSpendSchema,
        reached: z.enum(["usd", "tokens", "agentTurns", "wallMs"]).nullable(),
      }),
    ),
  },
  /** Long poll: the next submission or turn end for an open agent visit. */
  "agent.next": {
    params: z.object({ path: nodePathSchema, visit: visitNumberSchema }),
    result: z.discriminatedUnion("type", [
      z.object({ type: z.literal("submission"), submissionId: z.string(), output: z.unknown() }),
      z.object({ type: z.literal("turn_ended"), ending: agentTurnEndingSchema }),
      // The step's turn was interrupted (Escape) and the run was asked to pause: park and stop.
      z.object({ type: z.literal("paused") }),
      // The turn's reported usage reached the run's budget: the step checks it again (which parks).
      z.object({ type: z.literal("budget_exceeded") }),
    ]),
  },
  /** The verdict on a submission, returned to the model through the extension. */
  "agent.verdict": {
    params: z.object({
      submissionId: z.string(),
      verdict: z.discriminatedUnion("accepted", [
        z.object({ accepted: z.literal(true) }),
        z.object({ accepted: z.literal(false), reason: z.string().max(2048) }),
      ]),
    }),
    result: z.object({ ok: z.literal(true) }),
  },
  /** An isolated agent step's latest progress (rate-limited by the worker); the host relays it. */
  "agent.progress": { params: agentProgressSchema, result: z.object({ ok: z.literal(true) }) },
  /** An isolated attempt's live transcript so far (rate-limited by the worker); the host holds the latest. */
  "agent.live": { params: agentLiveSchema, result: z.object({ ok: z.literal(true) }) },
  /**
   * A running visit's latest `ctx.progress` (or isolated agent `update`), rate-limited by the worker.
   * The host saves it for the visit's attempt; `saved: false` when that attempt is no longer running.
   */
  "node.progress": { params: nodeProgressReportSchema, result: z.object({ saved: z.boolean() }) },
  /**
   * A runtime-owned command's process group started (`alive: true`) or its leader exited. The host
   * kills the groups a worker still had running when that worker is gone (killed, crashed), so a
   * relaunched visit never runs beside the dead worker's command.
   */
  "worker.processGroup": {
    params: z.object({ pgid: z.number().int().min(2), alive: z.boolean() }),
    result: z.object({ ok: z.literal(true) }),
  },
  /** The typed exit report; the worker exits right after the reply. */
  "worker.exit": { params: workerExitSchema, result: z.object({ ok: z.literal(true) }) },
} as const;

type WorkerMethod = keyof typeof workerMethods;
export type WorkerResult<M extends WorkerMethod> = z.infer<(typeof workerMethods)[M]["result"]>;

/**
 * Pushes from host to worker. `assign`: the first frame a pre-started (warm) worker gets: which launch
 * it now is, and the run's working directory to move into before it says `worker.hello`.
 * `cancel`: abort the running node and exit. `wake`: to an idle worker, a launch is coming: load what
 * a run needs now, before the `assign` (the frame itself is all it takes; it carries nothing). A worker
 * pushes nothing to the host: all it says is a method with a reply.
 */
export const workerPushes = {
  assign: z.object({ launchId: z.string().min(1).max(200), workingDir: z.string().min(1) }),
  wake: z.object({}),
  cancel: z.object({ reason: z.string().max(512) }),
} as const satisfies PushTable;
