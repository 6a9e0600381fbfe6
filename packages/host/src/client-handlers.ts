import { randomUUID } from "node:crypto";
import {
  type clientMethods,
  type Handlers,
  isSaved,
  PROTOCOL_VERSION,
  RpcError,
  type RunStatus,
  runStatusSchema,
  type TurnRecord,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { buildRunSummary, buildRunView, type LiveWorkerIndex } from "./build-run-view.js";
import type { PiSdkLocation } from "./pi-sdk-location.js";
import type { RunControl } from "./run-control.js";
import type { ScheduleFirer } from "./schedule-firer.js";
import { readRunHistoryView } from "./run-history.js";
import type { LiveTranscripts } from "./live-transcripts.js";
import { readStepConversation } from "./step-conversation.js";
import { turnStopReason } from "./turn-abort.js";
import type { Supervisor } from "./supervisor.js";
import type { ViewPublisher, ViewSink } from "./view-publisher.js";
import type { WorkflowTurns } from "./workflow-turns.js";

export interface HostInfo {
  pid: number;
  version: string;
  stateDir: string;
  startedAt: number;
  synchronous: "FULL" | "NORMAL";
}

export interface ClientHandlerDeps {
  store: RunStore;
  control: RunControl;
  schedules: ScheduleFirer;
  supervisor: Supervisor;
  /** What the views know of live work: accepted workers and isolated agent steps' activity. */
  live: LiveWorkerIndex;
  /** Where a conversation step's live transcript is held (`turns.live`). */
  liveTranscripts: Pick<LiveTranscripts, "set" | "dropOwner">;
  /** Where a session's workflow turn (submit, update, end) reaches its visit's worker. */
  turns: WorkflowTurns;
  /** Where the extension's report of its Pi's SDK folder goes. */
  piSdk: Pick<PiSdkLocation, "report">;
  publisher: ViewPublisher;
  info: HostInfo;
  /** How long the extension holds claimed messages before another delivery may take them. */
  messageLeaseMs: number;
  /** Stop the host after the current reply is on its way. */
  requestStop(): void;
  /** Re-arm the wake clock (a schedule changed). */
  rearm(): void;
}

/** One client connection's protocol state. */
export interface ClientConnection {
  readonly sink: ViewSink;
  greeted: boolean;
}

function statusCounts(store: RunStore): Record<RunStatus, number> {
  const counts = store.countRunsByStatus();
  const all = {} as Record<RunStatus, number>;
  for (const status of runStatusSchema.options) all[status] = counts[status] ?? 0;
  return all;
}

/** Client protocol v1, served for one connection. Nothing but `hello` is answered before `hello`. */
export function clientHandlers(
  deps: ClientHandlerDeps,
  conn: ClientConnection,
): Handlers<typeof clientMethods> {
  const { store, control, supervisor, live, turns, publisher, info } = deps;
  // A schedule added, paused, resumed or deleted moves the clock.
  const scheduleChanged = <T>(changed: T): T => {
    deps.rearm();
    return changed;
  };
  const touched = (runId: string | null | undefined) => {
    if (runId) supervisor.runChanged(runId);
  };
  const handlers: Handlers<typeof clientMethods> = {
    hello: ({ protocol, client, piSdk, launching }) => {
      if (protocol !== PROTOCOL_VERSION) {
        throw new RpcError(
          "protocol_mismatch",
          `This piw host speaks client protocol ${PROTOCOL_VERSION}, the client speaks ${protocol}; use a client and host from the same piw release.`,
        );
      }
      conn.greeted = true;
      if (piSdk !== undefined && client === "extension") deps.piSdk.report(piSdk);
      if (launching === true) supervisor.wakeIdleWorker();
      return {
        protocol: PROTOCOL_VERSION,
        hostPid: info.pid,
        stateDir: info.stateDir,
        version: info.version,
      };
    },
    "runs.reserve": (params) => control.reserve(params),
    "runs.get": ({ runId }) => buildRunView(store, runId, live),
    "runs.history": ({ runId }) => readRunHistoryView(store, runId),
    "runs.conversation": ({ runId, path }) =>
      readStepConversation(store, runId, path, {
        facts: (at, visit) => live.agentFacts?.(runId, at, visit) ?? [],
        live: (at, visit) => live.liveTranscript?.(runId, at, visit),
      }),
    "runs.list": (query) => store.listRuns(query).map((run) => buildRunSummary(store, run, live)),
    "runs.cancel": ({ runId, by }) => control.cancel(runId, by),
    "runs.pause": ({ runId }) => control.pause(runId),
    "runs.resume": ({ runId, acceptChanges, budget }) =>
      control.resume(runId, {
        ...(acceptChanges === undefined ? {} : { acceptChanges }),
        ...(budget === undefined ? {} : { budget }),
      }),
    "runs.answer": ({ runId, answer, answerer, requestKey }) =>
      control.answer(runId, answer, requestKey, answerer),
    "runs.restart": ({ runId, requestKey }) => control.restart(runId, requestKey),
    "runs.resolveEffect": (params) => control.resolveEffect(params),
    "runs.subscribe": ({ runId, sessionId }) => ({
      subscriptionId: publisher.subscribe(
        conn.sink,
        runId !== undefined
          ? { kind: "run", runId }
          : sessionId !== undefined
            ? { kind: "session", sessionId }
            : { kind: "all" },
      ),
    }),
    "runs.unsubscribe": ({ subscriptionId }) => {
      if (!publisher.unsubscribe(conn.sink, subscriptionId)) {
        throw new RpcError(
          "not_found",
          `No subscription ${subscriptionId.slice(0, 100)} on this connection.`,
        );
      }
      return { ok: true as const };
    },
    "schedules.add": (params) => {
      const check = store.schedules.checkTiming(params.timing);
      if (!check.ok) throw new RpcError("invalid_params", `The schedule's timing: ${check.problem}.`);
      return scheduleChanged(store.schedules.add(params));
    },
    "schedules.list": () => store.schedules.list(),
    "schedules.pause": ({ scheduleId, note }) =>
      scheduleChanged(store.schedules.pause(scheduleId, note ?? null)),
    "schedules.resume": ({ scheduleId }) => scheduleChanged(store.schedules.resume(scheduleId)),
    "schedules.delete": ({ scheduleId }) => scheduleChanged(store.schedules.delete(scheduleId)),
    "schedules.trigger": ({ scheduleId }) => deps.schedules.trigger(scheduleId),
    "session.settled": ({ sessionId }) => ({ activated: control.sessionSettled(sessionId) }),
    "turns.start": (params) => {
      const started = store.startTurn(params);
      if (isSaved(started)) touched(started.value.turn.runId);
      return started;
    },
    "turns.end": (params) => {
      const ended = store.endTurn(params);
      if (ended.kind === "applied") {
        const turn = ended.value;
        // Escape in Pi: the step's run pauses now; a resume delivers the step prompt again. A turn the
        // host had the session abort (its step is over) is only reported, like any other end.
        if (turn.endReason === "aborted" && turn.runId !== null && !hostStopped(store, turn)) {
          control.pause(turn.runId);
        } else turns.turnEnded(turn);
      }
      if (isSaved(ended)) {
        touched(ended.value.runId);
        // The ended turn's messages are in Pi's session entries now: its live transcript is done.
        if (ended.value.runId !== null)
          deps.liveTranscripts.dropOwner(ended.value.runId, `session:${params.sessionId}`);
      }
      return ended;
    },
    "turns.settle": (params) => {
      const settled = store.settleSessionTurns(params);
      if (settled.kind === "applied") for (const turn of settled.value) turns.turnEnded(turn);
      if (isSaved(settled)) for (const turn of settled.value) touched(turn.runId);
      return settled;
    },
    "turns.submit": ({ sessionId, output }) => turns.submit(sessionId, output),
    "turns.update": ({ sessionId, update }) => turns.update(sessionId, update),
    "turns.live": ({ sessionId, live: transcript }) => {
      // The step comes from the session's open turn (the turn-ownership rule), never from the report.
      const turn = store.openSessionTurn(sessionId);
      if (!turn || turn.runId === null || turn.path === null || turn.visit === null) return { held: false };
      const at = { path: turn.path, visit: turn.visit, attempt: null };
      deps.liveTranscripts.set(turn.runId, at, transcript, `session:${sessionId}`);
      return { held: true };
    },
    "turns.usage": (params) => {
      const stop = turns.usage(params);
      return { stop };
    },
    "messages.claim": ({ sessionId, limit }) => {
      const claimed = store.claimMessages({
        sessionId,
        claimToken: randomUUID(),
        leaseMs: deps.messageLeaseMs,
        ...(limit === undefined ? {} : { limit }),
      });
      if (isSaved(claimed)) for (const runId of new Set(claimed.value.map((m) => m.runId))) touched(runId);
      return claimed;
    },
    "messages.delivered": (params) => {
      const delivered = store.markMessageDelivered(params);
      if (isSaved(delivered)) touched(delivered.value.runId);
      return delivered;
    },
    "messages.release": (params) => store.releaseMessage(params),
    "host.status": () => ({
      ...info,
      workers: supervisor.liveWorkers(),
      runs: statusCounts(store),
      idleWorkerPid: supervisor.idleWorkerPid(),
    }),
    "host.stop": () => {
      deps.requestStop();
      return { stopping: true as const };
    },
  };
  return gateOnHello(handlers, conn);
}

function gateOnHello(
  handlers: Handlers<typeof clientMethods>,
  conn: ClientConnection,
): Handlers<typeof clientMethods> {
  const gated: Record<string, (params: never) => unknown> = {};
  for (const [method, handler] of Object.entries(handlers) as Array<[string, (params: never) => unknown]>) {
    gated[method] =
      method === "hello"
        ? handler
        : (params: never) => {
            if (!conn.greeted) {
              throw new RpcError(
                "protocol_mismatch",
                `Call hello with protocol ${PROTOCOL_VERSION} before ${method.slice(0, 100)}.`,
              );
            }
            return handler(params);
          };
  }
  return gated as Handlers<typeof clientMethods>;
}

/** Whether the host had decided that this turn must stop (see `turnStopReason`). */
function hostStopped(store: ClientHandlerDeps["store"], turn: TurnRecord): boolean {
  if (turn.runId === null) return false;
  return turnStopReason(store.getRun(turn.runId), turn, store.listRunSteps(turn.runId)) !== null;
}
