import {
  type HistoryEvent,
  type NodeView,
  type RunHistory,
  type RunStatus,
  type RunView,
  type TerminalOutcome,
  UNVISITED_NODE,
} from "@piw/protocol";

/** The replayed run at one point of its trace. */
interface ReplayState {
  status: RunStatus;
  outcome: TerminalOutcome | null;
  cursor: RunView["cursor"];
  startedAt: number | null;
  finishedAt: number | null;
  nodes: Map<string, NodeView>;
  /** The visit numbers seen per node path: a crash retry reopens a visit, it does not add one. */
  visits: Map<string, Set<number>>;
}

function setRun(state: ReplayState, at: number, status: RunStatus, outcome: TerminalOutcome | null): void {
  state.status = status;
  state.outcome = outcome;
  if (status === "running" && state.startedAt === null) state.startedAt = at;
  if (outcome !== null) state.finishedAt = at;
}

function endNode(
  state: ReplayState,
  event: HistoryEvent & { path: string },
  ending: NodeView["state"],
  errorCode: string | null,
): void {
  const node = state.nodes.get(event.path);
  if (node) Object.assign(node, { state: ending, finishedAt: event.at, errorCode });
}

/**
 * What one trace event does to the replayed run. Every event is named, so a new event fails to
 * compile until it has its rule here: the store's status after an event is the status replayed.
 */
function applyEvent(state: ReplayState, event: HistoryEvent): void {
  switch (event.type) {
    case "run.queued":
    case "run.requeued":
    case "run.lease_expired":
      setRun(state, event.at, "queued", null);
      return;
    case "run.claimed":
      setRun(state, event.at, "starting", null);
      return;
    case "run.running":
      setRun(state, event.at, "running", null);
      return;
    case "run.parked":
      setRun(state, event.at, "parked", null);
      return;
    case "run.completed":
      setRun(state, event.at, "done", "completed");
      return;
    case "run.waiting":
      setRun(state, event.at, "done", "waiting");
      return;
    case "run.failed":
      setRun(state, event.at, "failed", "failed");
      return;
    case "run.timed_out":
      setRun(state, event.at, "failed", "timed_out");
      return;
    case "run.cancelled":
      setRun(state, event.at, "cancelled", "cancelled");
      return;
    case "node.started": {
      const node = state.nodes.get(event.path);
      if (node === undefined) return;
      const seen = state.visits.get(event.path) ?? new Set<number>();
      seen.add(event.visit);
      state.visits.set(event.path, seen);
      Object.assign(node, {
        state: "running",
        visits: seen.size,
        attempt: 1,
        startedAt: event.at,
        finishedAt: null,
        errorCode: null,
      });
      state.cursor = { path: event.path, visit: event.visit };
      return;
    }
    case "node.retried": {
      const node = state.nodes.get(event.path);
      if (node)
        Object.assign(node, {
          state: "running",
          attempt: event.data.attempt,
          finishedAt: null,
          errorCode: null,
        });
      return;
    }
    case "node.succeeded":
      endNode(state, event, "succeeded", null);
      return;
    case "node.failed":
      endNode(state, event, "failed", event.data.code);
      return;
    case "node.timed_out":
      endNode(state, event, "timed_out", event.data.code);
      return;
    // Facts that change neither the run's status nor a node's state.
    case "run.pause_requested":
    case "run.answered":
    case "run.redefined":
    case "run.presented":
    case "run.presentation_failed":
    case "effect.reserved":
    case "effect.settled":
    case "effect.failed":
    case "effect.resolved":
    case "message.queued":
    case "message.claimed":
    case "message.delivered":
    case "message.cancelled":
    case "turn.started":
    case "turn.ended":
    case "turn.lost":
    case "worker.launched":
    case "worker.exited":
      return;
    default:
      event satisfies never;
  }
}

/**
 * The run as it stood just after `position` in its recorded events: every node's state, visits,
 * attempt and timing, and the run's status, re-derived from the trace alone. Nothing is working in
 * a replayed view, so its current work is none.
 */
export function replayView(view: RunView, history: RunHistory, position: number): RunView {
  const last = Math.min(Math.max(0, position), history.events.length - 1);
  const state: ReplayState = {
    status: "queued",
    outcome: null,
    cursor: null,
    startedAt: null,
    finishedAt: null,
    visits: new Map(),
    nodes: new Map(view.nodes.map((node) => [node.path, { ...node, ...UNVISITED_NODE }])),
  };
  for (let i = 0; i <= last; i += 1) applyEvent(state, history.events[i] as HistoryEvent);
  return {
    ...view,
    status: state.status,
    outcome: state.outcome,
    cursor: state.cursor,
    startedAt: state.startedAt,
    finishedAt: state.finishedAt,
    currentWork: { kind: "none" },
    recoveryReason: state.status === "parked" ? view.recoveryReason : null,
    error: state.status === "failed" ? view.error : null,
    nodes: view.nodes.map((node) => state.nodes.get(node.path) as NodeView),
  };
}

/** One step along the timeline; `null` is live. Stepping right off the end snaps back to live. */
export function stepReplay(position: number | null, delta: number, length: number): number | null {
  if (length === 0) return null;
  const from = position ?? length - 1;
  const next = Math.min(Math.max(0, from + delta), length - 1);
  return next >= length - 1 ? null : next;
}

/** `node.succeeded review #2`: one event as the replay header names it. */
export function describeEvent(event: HistoryEvent): string {
  if (event.path === null) return event.type;
  return `${event.type} ${event.path}${event.visit === null ? "" : ` #${event.visit}`}`;
}

/** The trace events after which a run's open visits show why it stopped (see `stoppedVisitState`). */
const RUN_STOPS: ReadonlySet<HistoryEvent["type"]> = new Set([
  "run.cancelled",
  "run.timed_out",
  "run.parked",
  "run.failed",
  "run.completed",
  "run.waiting",
]);

/** When the run last stopped (ended or parked); its open visits show that stop from then. */
function lastStopAt(history: RunHistory): number {
  for (let i = history.events.length - 1; i >= 0; i -= 1) {
    const { type, at } = history.events[i] as HistoryEvent;
    if (RUN_STOPS.has(type)) return at;
  }
  return Number.NEGATIVE_INFINITY;
}

/**
 * The inspector's data as it stood at a replay point: only what had happened by the event's time,
 * with work that finished later shown as still under way.
 */
export function historyAt(history: RunHistory, position: number): RunHistory {
  const event = history.events[Math.min(Math.max(0, position), history.events.length - 1)];
  if (event === undefined) return history;
  const at = event.at;
  const stoppedAt = lastStopAt(history);
  return {
    ...history,
    events: history.events.slice(0, position + 1),
    steps: history.steps
      .filter((step) => step.startedAt <= at)
      .map((step) => {
        if (step.finishedAt !== null && step.finishedAt > at) {
          return {
            ...step,
            status: "running" as const,
            finishedAt: null,
            output: null,
            error: null,
            errorCode: null,
          };
        }
        // A visit open when the run stopped says so only from the stop on.
        const open = step.finishedAt === null && step.status !== "running";
        return open && at < stoppedAt ? { ...step, status: "running" as const } : step;
      }),
    effects: history.effects
      .filter((effect) => effect.reservedAt <= at)
      .map((effect) =>
        effect.settledAt !== null && effect.settledAt > at
          ? {
              ...effect,
              status: "reserved" as const,
              settledAt: null,
              result: null,
              error: null,
              errorCode: null,
            }
          : effect,
      ),
    messages: history.messages.filter((message) => message.createdAt <= at),
    turns: history.turns
      .filter((turn) => turn.startedAt <= at)
      .map((turn) =>
        turn.endedAt !== null && turn.endedAt > at
          ? { ...turn, status: "open" as const, endedAt: null, endReason: null }
          : turn,
      ),
  };
}
