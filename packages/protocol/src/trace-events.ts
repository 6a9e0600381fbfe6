import { z } from "zod";
import { nodePathSchema, opaqueIdSchema, runIdSchema, visitNumberSchema } from "./ids.js";
import type { RunCommandType } from "./run-command.js";
import {
  effectModeSchema,
  messageKindSchema,
  nodeKindSchema,
  workerExitDecisionSchema,
} from "./run-records.js";
import { runStatusSchema } from "./run-status.js";
import { errorCodeSchema } from "./safe-error.js";
import { turnEndReasonSchema } from "./turn-records.js";
import type { RecoveryCode } from "./transition.js";

// The run's append-only trace: every event the store records, with its payload. The store writes only
// these (`TraceEventInput`); the viewer's replay reads them (`TraceEvent`) with one exhaustive switch,
// so a new event without a replay rule does not compile. Names are stable across versions.

// Each key names itself, so a value added to the closed set is a type error here until it is listed.
const recoveryCodeSchema = z.enum({
  paused: "paused",
  worker_lost: "worker_lost",
  worker_lost_no_progress: "worker_lost_no_progress",
  agent_turns_lost: "agent_turns_lost",
  agent_attempts_exhausted: "agent_attempts_exhausted",
  manual_effect_unsettled: "manual_effect_unsettled",
  changes_refused: "changes_refused",
  waiting: "waiting",
  retry_waiting: "retry_waiting",
} satisfies { [K in RecoveryCode]: K });
const commandTypeSchema = z.enum({
  start: "start",
  resume: "resume",
  continue: "continue",
  restart: "restart",
} satisfies { [K in RunCommandType]: K });

/** An event about the run as a whole: no node, no visit. */
const ofRun = { path: z.null().default(null), visit: z.null().default(null) };
/** An event about one node visit. */
const ofVisit = { path: nodePathSchema, visit: visitNumberSchema };
/** An event that names a node visit when the thing it records belongs to one (a terminal message does not). */
const nearVisit = { path: nodePathSchema.nullable(), visit: visitNumberSchema.nullable() };
/** An event that carries nothing beyond its name and place. */
const noData = { data: z.null().default(null) };

const codeData = z.object({ code: errorCodeSchema });
const launchData = z.object({ launchId: opaqueIdSchema.optional() });

export const traceEventSchema = z.discriminatedUnion("type", [
  // Run lifecycle: each of these records a status change (the status-table rule).
  z.object({
    type: z.literal("run.queued"),
    ...ofRun,
    data: z.union([
      z.object({ command: z.literal("start") }),
      z.object({
        command: z.enum(["continue", "restart"]),
        parentRunId: runIdSchema,
        /** A continuation: who answered its checkpoint (`automatic`: the host, at a gate's deadline). */
        answeredBy: z.enum(["human", "model", "automatic"]).optional(),
      }),
    ]),
  }),
  z.object({
    type: z.literal("run.claimed"),
    ...ofRun,
    data: z.object({ from: runStatusSchema, generation: z.number().int().min(0) }),
  }),
  z.object({ type: z.literal("run.running"), ...ofRun, ...noData }),
  // A resume accepted the changed workflow file: the run goes on under its new definition.
  z.object({ type: z.literal("run.redefined"), ...ofRun, ...noData }),
  z.object({ type: z.literal("run.parked"), ...ofRun, data: z.object({ reason: recoveryCodeSchema }) }),
  // A claim expired before any worker was launched for it: back to `queued`.
  z.object({ type: z.literal("run.lease_expired"), ...ofRun, ...noData }),
  // A launch's worker vanished before its never-run command was accepted, with its host: back to `queued`.
  z.object({ type: z.literal("run.requeued"), ...ofRun, data: launchData }),
  z.object({ type: z.literal("run.completed"), ...ofRun, ...noData }),
  z.object({ type: z.literal("run.waiting"), ...ofRun, ...noData }),
  z.object({ type: z.literal("run.failed"), ...ofRun, data: codeData.extend(launchData.shape) }),
  z.object({ type: z.literal("run.timed_out"), ...ofRun, data: codeData }),
  z.object({ type: z.literal("run.cancelled"), ...ofRun, ...noData }),
  // Run facts that leave the status alone.
  z.object({ type: z.literal("run.pause_requested"), ...ofRun, ...noData }),
  // A waiting run's checkpoint was answered: by whom (`automatic`: the host, at a gate's deadline).
  z.object({
    type: z.literal("run.answered"),
    ...ofRun,
    data: z.object({ childRunId: runIdSchema, by: z.enum(["human", "model", "automatic"]) }),
  }),
  z.object({ type: z.literal("run.presented"), ...ofRun, ...noData }),
  // `code` is the store's own error code for why the terminal messages could not be made.
  z.object({
    type: z.literal("run.presentation_failed"),
    ...ofRun,
    data: z.object({ code: z.string().min(1).max(64) }),
  }),
  // Node visits.
  z.object({ type: z.literal("node.started"), ...ofVisit, data: z.object({ kind: nodeKindSchema }) }),
  z.object({
    type: z.literal("node.retried"),
    ...ofVisit,
    data: z.object({ attempt: z.number().int().min(2) }),
  }),
  z.object({ type: z.literal("node.succeeded"), ...ofVisit, ...noData }),
  z.object({ type: z.literal("node.failed"), ...ofVisit, data: codeData }),
  z.object({ type: z.literal("node.timed_out"), ...ofVisit, data: codeData }),
  // Managed effects of a node visit.
  z.object({
    type: z.literal("effect.reserved"),
    ...ofVisit,
    data: z.object({ effectType: z.string().min(1).max(200), mode: effectModeSchema }),
  }),
  z.object({
    type: z.literal("effect.settled"),
    ...ofVisit,
    data: z.object({ effectType: z.string().min(1).max(200) }),
  }),
  z.object({
    type: z.literal("effect.failed"),
    ...ofVisit,
    data: z.object({ effectType: z.string().min(1).max(200) }),
  }),
  z.object({
    type: z.literal("effect.resolved"),
    ...ofVisit,
    data: z.object({ effectId: z.string().min(1).max(800), happened: z.boolean() }),
  }),
  // The outbox towards the run's Pi session.
  z.object({
    type: z.literal("message.queued"),
    ...ofVisit,
    data: z.object({ kind: messageKindSchema, messageId: opaqueIdSchema }),
  }),
  z.object({ type: z.literal("message.claimed"), ...ofRun, ...noData }),
  z.object({
    type: z.literal("message.delivered"),
    ...nearVisit,
    data: z.object({ messageId: opaqueIdSchema }),
  }),
  z.object({
    type: z.literal("message.cancelled"),
    ...nearVisit,
    data: z.object({ messageId: opaqueIdSchema }),
  }),
  // Pi turns the run owns.
  z.object({ type: z.literal("turn.started"), ...nearVisit, data: z.object({ turnId: opaqueIdSchema }) }),
  z.object({ type: z.literal("turn.ended"), ...nearVisit, data: z.object({ reason: turnEndReasonSchema }) }),
  z.object({ type: z.literal("turn.lost"), ...nearVisit, ...noData }),
  // Worker processes. `worker.exited` is recorded alone only when the exit changed nothing else.
  z.object({
    type: z.literal("worker.launched"),
    ...ofRun,
    data: z.object({ launchId: opaqueIdSchema, command: commandTypeSchema }),
  }),
  z.object({
    type: z.literal("worker.exited"),
    ...ofRun,
    data: z.object({ launchId: opaqueIdSchema, decision: workerExitDecisionSchema }),
  }),
]);

/** One recorded trace event, as read back: `path`, `visit` and `data` are always present. */
export type TraceEvent = z.infer<typeof traceEventSchema>;
/** One trace event as the store writes it: a run-wide event may leave out `path` and `visit`, an empty one `data`. */
export type TraceEventInput = z.input<typeof traceEventSchema>;
export type TraceEventType = TraceEvent["type"];

/** Every trace event name, in declaration order. */
export const TRACE_EVENT_TYPES: readonly TraceEventType[] = traceEventSchema.options.map(
  (option) => option.shape.type.value,
);
