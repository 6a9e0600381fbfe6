import type {
  AdvanceNodeVisit,
  NodeProgressReport,
  NodeVisitAdvance,
  NodeVisitState,
  Transition,
} from "@piw/protocol";
import type { CompiledNode } from "../compiler/compiled-workflow.js";
import { forwardingPort } from "./forwarding-port.js";
import type { RunPort } from "./run-port.js";

/**
 * The most advances of one sequence in flight at once. Their writes share a few group commits, and a
 * window wider than one commit's worth lets the next nodes run while the host saves the previous ones.
 */
export const BURST_WINDOW = 128;
/**
 * And the most output they may carry between them (as `outputWeight` counts it): a window of large
 * values would hold that much in both processes until saved.
 */
export const BURST_OUTPUT_BUDGET = 4 * 1024 * 1024;

/** Nodes whose visit has no effect outside the run's own state: a later one may run before the earlier is saved. */
export function isPureNode(node: CompiledNode): boolean {
  return node.kind === "compute" || node.kind === "decision";
}

/** How a sent advance ended: the host's reply, or the error its request failed with. */
type SentOutcome = { kind: "reply"; reply: Transition<NodeVisitAdvance> } | { kind: "error"; error: unknown };

/** The first advance of a burst whose reply was not the predicted one, with how it ended. */
export interface BurstBreak {
  request: AdvanceNodeVisit;
  outcome: SentOutcome;
}

/**
 * Thrown out of the barrier when a burst broke: the sequence rewinds to the break and goes on from
 * its real reply, exactly as it would have without running ahead.
 */
export class BurstStopped extends Error {
  override readonly name = "BurstStopped";
  constructor(readonly broke: BurstBreak) {
    super("A pipelined write was not saved as predicted.");
  }
}

interface Sent {
  request: AdvanceNodeVisit;
  /** Its output's weight, held against the budget until it is settled. */
  weight: number;
  /** Journal length when it left: rewinding to it restores the position as it was just after sending. */
  mark: number;
  outcome: Promise<SentOutcome>;
}

/** One undo step of a change made to shared state while writes were in flight. */
type Undo = () => void;

/** The start of a fresh visit's first attempt of a pure node, as the store saves it (no deadline, no due time). */
export function predictedStart(path: string, visit: number): Transition<NodeVisitState> {
  return { kind: "applied", value: { status: "running", path, visit, attempt: 1 } };
}

function asPredicted(outcome: SentOutcome, request: AdvanceNodeVisit): boolean {
  if (outcome.kind !== "reply") return false;
  const { reply } = outcome;
  if (reply.kind !== "applied" && reply.kind !== "adopted") return false;
  const started = reply.value.started;
  if (started.kind !== "applied") return false;
  const state = started.value;
  return (
    state.status === "running" &&
    state.path === request.start.path &&
    state.visit === request.start.visit &&
    state.attempt === 1 &&
    (state.deadline ?? null) === null &&
    state.dueAt === undefined &&
    (state.failedAttempts ?? 0) === 0
  );
}

/**
 * Pipelined pure steps of one sequence (the pipelining rule in docs/maintainers/runtime.md). A pure
 * visit that succeeds into another pure node sends its advance and the next node runs at once, from
 * the start the store will save. `port` is the barrier: every other call waits until every advance
 * sent before it is acknowledged, so nothing with an effect starts ahead of an unsaved write. A reply
 * that differs ends the burst: the barrier throws `BurstStopped`, and `rewind` undoes what was
 * changed after that write left.
 */
export class PureBurst {
  readonly port: RunPort;
  private sent: Sent[] = [];
  private journal: Undo[] = [];
  /** How many undo steps were dropped from the journal's front (their writes are all saved): marks count them. */
  private journalBase = 0;
  /** Sent advances whose reply has not arrived, and whether any reply that did was unpredicted. */
  private unanswered = 0;
  /** The summed `weight` of the advances in `sent`. */
  private weightInFlight = 0;
  private broken = false;
  /** The latest progress of each visit whose start is still in flight: sent once it is saved. */
  private readonly heldProgress = new Map<string, NodeProgressReport>();

  constructor(private readonly inner: RunPort) {
    const barrier = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => {
      return async (...args: A): Promise<R> => {
        await this.settle();
        return call(...args);
      };
    };
    this.port = forwardingPort(inner, {
      readRun: barrier(() => inner.readRun()),
      markRunning: barrier(() => inner.markRunning()),
      loadSnapshot: barrier(() => inner.loadSnapshot()),
      startNodeVisit: barrier((req) => inner.startNodeVisit(req)),
      finishNodeVisit: barrier((req) => inner.finishNodeVisit(req)),
      advanceNodeVisit: barrier((req) => inner.advanceNodeVisit(req)),
      reserveEffect: barrier((req) => inner.reserveEffect(req)),
      settleEffect: barrier((req) => inner.settleEffect(req)),
      enqueueMessage: barrier((req) => inner.enqueueMessage(req)),
      finishRun: barrier((ending) => inner.finishRun(ending)),
      parkRun: barrier((reason) => inner.parkRun(reason)),
      scheduleVisit: barrier((reason) => inner.scheduleVisit(reason)),
      redefineRun: barrier((req) => inner.redefineRun(req)),
      checkBudget: barrier((req) => inner.checkBudget(req)),
      nextAgentEvent: barrier((visit, signal) => inner.nextAgentEvent(visit, signal)),
      // Live data of a visit whose start may not be saved yet: held until nothing is in flight.
      reportProgress: (report) => {
        if (this.unanswered === 0 && !this.broken) inner.reportProgress(report);
        else this.heldProgress.set(`${report.path}\u0000${report.visit}`, report);
      },
    });
  }

  /** Whether writes are in flight: changes to shared state must then be journaled. */
  get running(): boolean {
    return this.sent.length > 0;
  }

  /** Record how to undo a change made while writes are in flight; nothing to record otherwise. */
  changed(undo: Undo): void {
    if (this.running) this.journal.push(undo);
  }

  /** Set `key` of `map`, undoably. */
  set<K, V>(map: Map<K, V>, key: K, value: V): void {
    this.remember(map, key);
    map.set(key, value);
  }

  /** Delete `key` of `map`, undoably. */
  delete<K, V>(map: Map<K, V>, key: K): void {
    this.remember(map, key);
    map.delete(key);
  }

  private remember<K, V>(map: Map<K, V>, key: K): void {
    if (!this.running) return;
    if (map.has(key)) {
      const before = map.get(key) as V;
      this.journal.push(() => map.set(key, before));
    } else this.journal.push(() => map.delete(key));
  }

  /**
   * Send `request` without waiting for its reply; waits for the oldest first while the window is full
   * (by count or by the output in flight).
   */
  async send(request: AdvanceNodeVisit): Promise<void> {
    if (this.broken) await this.settle();
    const weight = outputWeight(request.finish.result.output, BURST_OUTPUT_BUDGET);
    while (
      this.sent.length >= BURST_WINDOW ||
      (this.sent.length > 0 && this.weightInFlight + weight > BURST_OUTPUT_BUDGET)
    ) {
      await this.settleOldest();
    }
    this.weightInFlight += weight;
    this.unanswered += 1;
    const outcome = this.inner.advanceNodeVisit(request).then(
      (reply): SentOutcome => ({ kind: "reply", reply }),
      (error: unknown): SentOutcome => ({ kind: "error", error }),
    );
    void outcome.then((ended) => {
      this.unanswered -= 1;
      if (!asPredicted(ended, request)) this.broken = true;
      if (this.broken) this.heldProgress.clear();
      else if (this.unanswered === 0) this.releaseProgress();
    });
    this.sent.push({ request, weight, mark: this.journalBase + this.journal.length, outcome });
  }

  private releaseProgress(): void {
    const held = [...this.heldProgress.values()];
    this.heldProgress.clear();
    for (const report of held) this.inner.reportProgress(report);
  }

  /** Wait until every sent advance is acknowledged; throws `BurstStopped` at the first unpredicted one. */
  async settle(): Promise<void> {
    while (this.sent.length > 0) await this.settleOldest();
  }

  private async settleOldest(): Promise<void> {
    const oldest = this.sent[0];
    if (oldest === undefined) return;
    const outcome = await oldest.outcome;
    if (asPredicted(outcome, oldest.request)) {
      this.sent.shift();
      this.weightInFlight -= oldest.weight;
      // What was changed before the oldest write still in flight left can no longer be undone.
      const keep = this.sent[0]?.mark ?? this.journalBase + this.journal.length;
      this.journal.splice(0, keep - this.journalBase);
      this.journalBase = keep;
      return;
    }
    // Every later write was sent after this one: wait for all of them before anything else goes out.
    const later = this.sent.slice(1);
    this.sent = [];
    this.weightInFlight = 0;
    await Promise.all(later.map((entry) => entry.outcome));
    this.rewindTo(oldest.mark);
    this.broken = false;
    throw new BurstStopped({ request: oldest.request, outcome });
  }

  private rewindTo(mark: number): void {
    while (this.journalBase + this.journal.length > mark) this.journal.pop()?.();
    this.journalBase += this.journal.length;
    this.journal = [];
  }
}

/**
 * About how many bytes `value` takes as JSON, counted only up to `limit` (the walk stops there): the
 * text of strings and keys, and a few bytes for anything else. Cheap for the small values most pure
 * nodes return; a value at the limit counts as the whole budget.
 */
export function outputWeight(value: unknown, limit: number): number {
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && total < limit) {
    const item = pending.pop();
    if (typeof item === "string") total += item.length + 2;
    else if (item === null || typeof item !== "object") total += 8;
    else if (Array.isArray(item)) {
      total += 2 + item.length;
      for (const member of item) pending.push(member);
    } else {
      for (const [key, member] of Object.entries(item)) {
        total += key.length + 4;
        pending.push(member);
      }
    }
  }
  return Math.min(total, limit);
}
