import { clockDueAt, WAKE_LEAD_MS } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { ScheduleFirer } from "./schedule-firer.js";
import type { Supervisor } from "./supervisor.js";

export interface WakeClockDeps {
  store: Pick<RunStore, "nextWakeAt" | "listDueRuns" | "getRun" | "readAnswerCheck">;
  supervisor: Pick<Supervisor, "activate">;
  /** A due run waiting at an approval gate: answer it with its default (true) instead of waking it. */
  answerDue?(runId: string): boolean;
  /** Due schedules; absent: the clock only wakes runs. */
  schedules?: Pick<ScheduleFirer, "nextDueAt" | "fireDue" | "runChanged">;
  /** More kinds of due work (the running runs' wall budgets). */
  more?: readonly DueSource[];
  log: HostLog;
  now(): number;
}

/** A timer longer than this is re-armed when it fires (Node's timers overflow past ~24.8 days). */
const LONGEST_TIMER_MS = 60 * 60_000;
/** How many due runs one pass wakes before it yields to the event loop. */
const WAKE_BATCH = 50;

/**
 * Something the clock keeps time for. Each kind says when it is next due (null: never) and does what is
 * due by a time; a pass that had more to do than one batch says so, and the clock goes on after the
 * event loop has run. A new kind of due work is one more source.
 */
export interface DueSource {
  readonly name: string;
  nextAt(): number | null;
  /** Do what is due by `now`; true when more is due right away. */
  runDue(now: number): boolean;
  /** A run changed (parked, paused, resumed, ended): what this source must know of it. */
  notice(runId: string): void;
}

/** The clock's phases, each with what it holds: only `armed` and `passing` own a timer. */
type ClockPhase =
  | { kind: "idle" }
  | { kind: "armed"; at: number; timer: NodeJS.Timeout }
  | { kind: "passing"; timer: NodeJS.Timeout }
  | { kind: "stopped" };

/**
 * The host's one clock, for parked runs' waits and retry pauses and for schedules' firings: a single
 * timer for the earliest due time of any source (no second timer loop, no polling). Every change re-arms
 * it with one indexed read per source. At start the host calls `wakeDue`, which does what fell due while
 * it was down.
 */
export class WakeClock {
  private phase: ClockPhase = { kind: "idle" };
  private readonly sources: readonly DueSource[];

  constructor(private readonly deps: WakeClockDeps) {
    const runs = new RunWakeups(deps);
    const schedules = deps.schedules;
    const scheduled: DueSource[] = schedules
      ? [
          {
            name: "schedules",
            nextAt: () => schedules.nextDueAt(),
            runDue: (now) => schedules.fireDue(now),
            notice: (runId) => schedules.runChanged(runId),
          },
        ]
      : [];
    this.sources = [runs, ...scheduled, ...(deps.more ?? [])];
  }

  /** Point the timer at the earliest due time of any source; `changedRunId` is a run that just changed. */
  arm(changedRunId?: string): void {
    if (this.phase.kind === "stopped") return;
    if (changedRunId !== undefined) {
      for (const source of this.sources) this.guard(source, () => source.notice(changedRunId));
    }
    // A pass in batches arms the clock when it ends.
    if (this.phase.kind === "passing") return;
    let next: number | null = null;
    for (const source of this.sources) {
      const at = this.guard(source, () => source.nextAt()) ?? null;
      if (at !== null && (next === null || at < next)) next = at;
    }
    if (this.phase.kind === "armed" && this.phase.at === next) return;
    this.enter(next === null ? { kind: "idle" } : this.armedFor(next));
  }

  /** Do everything due now, in batches, then arm for what comes next. */
  wakeDue(): void {
    if (this.phase.kind === "stopped") return;
    this.enter({ kind: "idle" });
    this.pass();
  }

  stop(): void {
    this.enter({ kind: "stopped" });
  }

  /** The one place the phase changes: the timer of the phase left is cleared. */
  private enter(next: ClockPhase): void {
    if (this.phase.kind === "armed" || this.phase.kind === "passing") clearTimeout(this.phase.timer);
    this.phase = next;
  }

  private armedFor(at: number): ClockPhase {
    const delay = Math.min(LONGEST_TIMER_MS, Math.max(0, at - this.deps.now()));
    return { kind: "armed", at, timer: setTimeout(() => this.wakeDue(), delay) };
  }

  private pass(): void {
    const now = this.deps.now();
    let more = false;
    for (const source of this.sources) if (this.guard(source, () => source.runDue(now)) === true) more = true;
    if (this.phase.kind === "stopped") return;
    if (more) {
      // More may be due: go on after what is queued on the event loop.
      this.enter({ kind: "passing", timer: setTimeout(() => this.afterBatch(), 0) });
      return;
    }
    this.arm();
  }

  private afterBatch(): void {
    if (this.phase.kind !== "passing") return;
    this.phase = { kind: "idle" };
    this.pass();
  }

  private guard<T>(source: DueSource, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      this.deps.log(`clock: ${source.name} failed: ${describeBug(error)}`);
      return undefined;
    }
  }
}

/**
 * Parked runs' waits and retry pauses: due WAKE_LEAD_MS before their `wake_at`, woken (claimed and
 * launched with their resume command) so that a worker is up when the time comes; the woken wait or retry
 * sleeps in its worker until its exact due time. A due run the store refuses to wake (its Pi session is
 * busy) stays due and is tried again at the next firing or when a session settles.
 */
class RunWakeups implements DueSource {
  readonly name = "run wake-ups";
  /** The horizon of the last pass (its start plus the lead): every run due by then was tried. */
  private lastPass = -1;
  /** Runs the current pass tried, across its batches. */
  private tried = new Set<string>();
  private horizon: number | null = null;

  constructor(private readonly deps: WakeClockDeps) {}

  nextAt(): number | null {
    // Not already tried by the last pass: a refusal never spins the timer.
    const next = this.deps.store.nextWakeAt(this.lastPass);
    return next === null ? null : next - WAKE_LEAD_MS;
  }

  runDue(now: number): boolean {
    const { store, supervisor, log } = this.deps;
    const horizon = this.horizon ?? now + WAKE_LEAD_MS;
    this.lastPass = horizon;
    const tried = this.tried;
    const due = store.listDueRuns(horizon, WAKE_BATCH + tried.size).filter((id) => !tried.has(id));
    for (const runId of due) {
      tried.add(runId);
      try {
        if (this.deps.answerDue?.(runId)) continue;
        supervisor.activate(runId, "its wait is over", { wake: true });
      } catch (error) {
        log(`run ${runId}: wake failed: ${describeBug(error)}`);
      }
    }
    const more = due.length >= WAKE_BATCH;
    this.horizon = more ? horizon : null;
    if (!more) this.tried = new Set();
    return more;
  }

  /**
   * A run that parked on the clock after the last pass, due within that pass's horizon, was never tried
   * by it: move the horizon back so that the timer covers it.
   */
  notice(runId: string): void {
    const run = this.deps.store.getRun(runId);
    // A run waiting at an approval gate wakes at its deadline, to take the gate's default.
    const gate =
      run?.status === "done" && run.outcome === "waiting"
        ? this.deps.store.readAnswerCheck(runId)?.timeout
        : undefined;
    if (gate) {
      if (gate.at <= this.lastPass) this.lastPass = gate.at - 1;
      return;
    }
    if (run?.status !== "parked" || run.paused) return;
    const due = clockDueAt(run.recoveryReason);
    if (due !== null && due <= this.lastPass) this.lastPass = due - 1;
  }
}
