import type { HistoryEvent, NodeView, RunHistory, RunStatus, RunView, TerminalOutcome } from "@piw/protocol";

const RUN_EVENTS: Record<string, { status: RunStatus; outcome: TerminalOutcome | null }> = {
  "run.queued": { status: "queued", outcome: null },
  "run.requeued": { status: "queued", outcome: null },
  "run.claimed": { status: "starting", outcome: null },
  "run.running": { status: "running", outcome: null },
  "run.parked": { status: "parked", outcome: null },
  "run.completed": { status: "done", outcome: "completed" },
  "run.waiting": { status: "done", outcome: "waiting" },
  "run.failed": { status: "failed", outcome: "failed" },
  "run.timed_out": { status: "failed", outcome: "timed_out" },
  "run.cancelled": { status: "cancelled", outcome: "cancelled" },
};

const NODE_ENDINGS: Record<string, NodeView["state"]> = {
  "node.succeeded": "succeeded",
  "node.failed": "failed",
  "node.timed_out": "timed_out",
};

function codeOf(event: HistoryEvent): string | null {
  const data = event.data;
  if (data !== null && typeof data === "object" && !Array.isArray(data) && typeof data.code === "string") {
    return data.code;
  }
  return null;
}

/**
 * The run as it stood just after `position` in its recorded events: every node's state, visits,
 * attempt and timing, and the run's status, re-derived from the trace alone. Nothing is working in
 * a replayed view, so its current work is none.
 */
export function replayView(view: RunView, history: RunHistory, position: number): RunView {
  const last = Math.min(Math.max(0, position), history.events.length - 1);
  const nodes = new Map<string, NodeView>(
    view.nodes.map((node) => [
      node.path,
      {
        ...node,
        state: "pending",
        visits: 0,
        attempt: 0,
        startedAt: null,
        finishedAt: null,
        errorCode: null,
      },
    ]),
  );
  const visits = new Map<string, Set<number>>();
  let status: RunStatus = "queued";
  let outcome: TerminalOutcome | null = null;
  let cursor: RunView["cursor"] = null;
  let startedAt: number | null = null;
  let finishedAt: number | null = null;
  for (let i = 0; i <= last; i += 1) {
    const event = history.events[i] as HistoryEvent;
    const run = RUN_EVENTS[event.type];
    if (run !== undefined) {
      status = run.status;
      outcome = run.outcome;
      if (status === "running" && startedAt === null) startedAt = event.at;
      if (outcome !== null || status === "cancelled") finishedAt = event.at;
      continue;
    }
    if (event.path === null) continue;
    const node = nodes.get(event.path);
    if (node === undefined) continue;
    if (event.type === "node.started") {
      const seen = visits.get(event.path) ?? new Set<number>();
      if (event.visit !== null) seen.add(event.visit);
      visits.set(event.path, seen);
      Object.assign(node, {
        state: "running",
        visits: seen.size,
        attempt: 1,
        startedAt: event.at,
        finishedAt: null,
        errorCode: null,
      });
      cursor = { path: event.path, visit: event.visit ?? 1 };
    } else if (event.type === "node.retried") {
      const data = event.data;
      const attempt =
        data !== null && typeof data === "object" && !Array.isArray(data) && typeof data.attempt === "number"
          ? data.attempt
          : node.attempt + 1;
      Object.assign(node, { state: "running", attempt, finishedAt: null, errorCode: null });
    } else {
      const ending = NODE_ENDINGS[event.type];
      if (ending !== undefined)
        Object.assign(node, { state: ending, finishedAt: event.at, errorCode: codeOf(event) });
    }
  }
  return {
    ...view,
    status,
    outcome,
    cursor,
    startedAt,
    finishedAt,
    currentWork: { kind: "none" },
    recoveryReason: status === "parked" ? view.recoveryReason : null,
    error: status === "failed" ? view.error : null,
    nodes: view.nodes.map((node) => nodes.get(node.path) as NodeView),
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

/**
 * The inspector's data as it stood at a replay point: only what had happened by the event's time,
 * with work that finished later shown as still under way.
 */
export function historyAt(history: RunHistory, position: number): RunHistory {
  const event = history.events[Math.min(Math.max(0, position), history.events.length - 1)];
  if (event === undefined) return history;
  const at = event.at;
  return {
    ...history,
    events: history.events.slice(0, position + 1),
    steps: history.steps
      .filter((step) => step.startedAt <= at)
      .map((step) =>
        step.finishedAt !== null && step.finishedAt > at
          ? {
              ...step,
              status: "running" as const,
              finishedAt: null,
              output: null,
              error: null,
              errorCode: null,
            }
          : step,
      ),
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
