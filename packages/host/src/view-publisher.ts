import {
  type AgentProgress,
  type clientPushes,
  isEndedRun,
  isTerminalStatus,
  LIVE_STATUSES,
  type PushArgs,
  type RunView,
} from "@piw/protocol";
import type { RunReader } from "@piw/store";
import { buildRunView, type LiveWorkerIndex, type ViewReader } from "./build-run-view.js";
import { PassedVisits } from "./passed-visits.js";

/** Where pushed views go: one client connection, which takes only the client protocol's pushes. */
export interface ViewSink {
  push(...push: PushArgs<typeof clientPushes>): void;
}

/** Which runs a subscription receives: one run, the runs of one Pi session, or every run (viewers, the CLI). */
export type ViewScope =
  | { kind: "run"; runId: string }
  | { kind: "session"; sessionId: string }
  | { kind: "all" };

interface Subscription {
  sink: ViewSink;
  scope: ViewScope;
}

/**
 * After publishing a run's view, wait this many times what building and sending it took before the
 * next one: views of one run take at most about a thirtieth of the host's time (a tenth was a third of
 * its CPU on a followed chain, the host being mostly idle between commits). A small run's view costs
 * well under a millisecond, so it still goes out at once; a 1,000-node run's view (~0.3 MB) is sent
 * about ten times a second instead of after every node. A run's final view is never held back.
 */
const VIEW_COST_FACTOR = 30;

/**
 * Pushes `run.view` frames to subscribers. Changes are coalesced per event-loop turn, and per run
 * for as long as its last view's cost asks (see VIEW_COST_FACTOR); the view sent is always built from
 * the latest state. A view is pushed only when it differs from the last one pushed (its revision or
 * its current work moved).
 */
export class ViewPublisher {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly lastPushed = new Map<string, string>();
  /** What the views pushed of each run have shown of its visits (the passed-visits rule). */
  private readonly passed = new Map<string, PassedVisits>();
  private readonly dirty = new Set<string>();
  /** When each recently published run may be published again (`now()` time). */
  private readonly readyAt = new Map<string, number>();
  private flushScheduled = false;
  private deferredTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly reader: ViewReader & Pick<RunReader, "listRuns">,
    private readonly workers: LiveWorkerIndex,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Subscribe to the runs of `scope`; the current views follow the reply. */
  subscribe(sink: ViewSink, scope: ViewScope): string {
    const subscriptionId = `sub-${this.nextId++}`;
    this.subscriptions.set(subscriptionId, { sink, scope });
    setImmediate(() => this.pushCurrent(subscriptionId));
    return subscriptionId;
  }

  unsubscribe(sink: ViewSink, subscriptionId: string): boolean {
    const sub = this.subscriptions.get(subscriptionId);
    if (sub?.sink !== sink) return false;
    this.subscriptions.delete(subscriptionId);
    return true;
  }

  /** The connection closed: drop its subscriptions. */
  dropSink(sink: ViewSink): void {
    for (const [id, sub] of this.subscriptions) if (sub.sink === sink) this.subscriptions.delete(id);
  }

  /** A run changed (durably, or its live worker did): publish its view soon. */
  changed(runId: string): void {
    if (this.closed) return;
    this.dirty.add(runId);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** The host is stopping: drop pending changes and subscriptions; nothing is built after the store closes. */
  close(): void {
    this.closed = true;
    this.dirty.clear();
    this.subscriptions.clear();
    clearTimeout(this.deferredTimer);
  }

  /** Publish pending changes now. */
  flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const runs = [...this.dirty];
    this.dirty.clear();
    let earliest = Number.POSITIVE_INFINITY;
    for (const runId of runs) {
      const subs = this.interested(runId);
      if (subs.length === 0) {
        this.lastPushed.delete(runId);
        this.readyAt.delete(runId);
        this.passed.delete(runId);
        continue;
      }
      const started = this.now();
      const readyAt = this.readyAt.get(runId) ?? started;
      if (readyAt > started && !this.ended(runId)) {
        // Still paying for the last view: publish the latest state when the wait is over.
        this.dirty.add(runId);
        earliest = Math.min(earliest, readyAt);
        continue;
      }
      const view = this.build(runId, this.passedVisitsOf(runId));
      if (!view) continue;
      // A turn to abort is a decision for the session even when nothing else moved.
      const key = `${view.revision}:${JSON.stringify(view.currentWork)}:${view.abortTurn?.turnId ?? ""}:${agentKey(view)}:${progressKey(view)}:${view.liveConversation ?? 0}`;
      if (this.lastPushed.get(runId) === key) continue;
      this.lastPushed.set(runId, key);
      for (const [subscriptionId, sub] of subs) sub.sink.push("run.view", { subscriptionId, view });
      // No visit ends after its run: what the views showed of an ended run need not be kept.
      if (isTerminalStatus(view.status)) this.passed.delete(runId);
      const finished = this.now();
      this.readyAt.set(runId, finished + (finished - started) * (VIEW_COST_FACTOR - 1));
    }
    if (earliest !== Number.POSITIVE_INFINITY) this.flushLater(earliest);
  }

  /** One timer for all deferred runs, at the earliest time one of them may be published. */
  private flushLater(at: number): void {
    clearTimeout(this.deferredTimer);
    this.deferredTimer = setTimeout(
      () => {
        this.deferredTimer = undefined;
        this.flush();
      },
      Math.max(1, Math.ceil(at - this.now())),
    );
  }

  /** Whether the run has ended: its last view goes out at once, whatever the wait. */
  private ended(runId: string): boolean {
    try {
      const run = this.reader.getRun(runId);
      return run !== null && isEndedRun(run);
    } catch (error) {
      this.onError(error);
      return false;
    }
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  private interested(runId: string): Array<[string, Subscription]> {
    // Read only when a session follows runs: a run's origin session never changes.
    let session: string | null | undefined;
    const sessionOf = () => {
      if (session === undefined) {
        const origin = this.reader.getRun(runId)?.origin;
        session = origin?.kind === "pi" ? origin.sessionId : null;
      }
      return session;
    };
    return [...this.subscriptions].filter(([, { scope }]) => {
      switch (scope.kind) {
        case "all":
          return true;
        case "run":
          return scope.runId === runId;
        case "session":
          return sessionOf() === scope.sessionId;
        default:
          return scope satisfies never;
      }
    });
  }

  /** The runs whose current view a new subscription gets. */
  private currentRuns(scope: ViewScope): string[] {
    switch (scope.kind) {
      case "run":
        return [scope.runId];
      case "session":
        return this.reader
          .listRuns({ statuses: [...LIVE_STATUSES], sessionId: scope.sessionId, limit: 1000 })
          .map((r) => r.runId);
      case "all":
        return this.reader.listRuns({ statuses: [...LIVE_STATUSES], limit: 1000 }).map((r) => r.runId);
      default:
        return scope satisfies never;
    }
  }

  private passedVisitsOf(runId: string): PassedVisits {
    let passed = this.passed.get(runId);
    if (passed === undefined) {
      passed = new PassedVisits();
      this.passed.set(runId, passed);
    }
    return passed;
  }

  private build(runId: string, passed?: PassedVisits): RunView | null {
    try {
      return buildRunView(this.reader, runId, this.workers, passed);
    } catch (error) {
      this.onError(error);
      return null;
    }
  }

  private pushCurrent(subscriptionId: string): void {
    if (this.closed) return;
    const sub = this.subscriptions.get(subscriptionId);
    if (!sub) return;
    let runIds: string[];
    try {
      runIds = this.currentRuns(sub.scope);
    } catch (error) {
      this.onError(error);
      return;
    }
    for (const runId of runIds) {
      // The first view of a run starts what its pushes pass on; a later subscriber's is built apart,
      // so the other subscribers' next view still passes on everything since their last.
      const view = this.build(runId, this.passed.has(runId) ? undefined : this.passedVisitsOf(runId));
      if (!view) continue;
      sub.sink.push("run.view", { subscriptionId, view });
    }
  }
}

/** What moves when a visit reports progress: nothing else in the view needs to change. */
function progressKey(view: RunView): string {
  const run = view.runProgress;
  const shown = run === undefined ? [] : [`run:${run.path}/${run.visit}@${run.updatedAt}`];
  return [...(view.progress ?? []).map((p) => `${p.path}/${p.visit}@${p.updatedAt}`), ...shown].join(",");
}

/** What moves when an agent visit reports: the latest fact, and each open visit's own. */
function agentKey(view: RunView): string {
  const fact = (p: AgentProgress) => `${p.path}/${p.visit}.${p.attempt}:${p.seq}`;
  const latest = view.agentProgress === undefined ? "" : fact(view.agentProgress);
  return [latest, ...(view.agentActivity ?? []).map(fact)].join(",");
}
