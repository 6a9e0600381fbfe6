import { clockDueAt, WAKE_LEAD_MS } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { Supervisor } from "./supervisor.js";

export interface WakeClockDeps {
  store: Pick<RunStore, "nextWakeAt" | "listDueRuns" | "getRun" | "readAnswerCheck">;
  supervisor: Pick<Supervisor, "activate">;
  /** A due run waiting at an approval gate: answer it with its default (true) instead of waking it. */
  answerDue?(runId: string): boolean;
  log: HostLog;
  now(): number;
}

/** A timer longer than this is re-armed when it fires (Node's timers overflow past ~24.8 days). */
const LONGEST_TIMER_MS = 60 * 60_000;
/** How many due runs one pass wakes before it yields to the event loop. */
const WAKE_BATCH = 50;

/**
 * The host's one clock for waits and retry pauses: a single timer for the earliest `wake_at` in the
 * store's index (paused runs are not in it). Every run change re-arms it with one indexed read; it
 * fires WAKE_LEAD_MS before that time and wakes the runs due by then plus the lead (claimed and
 * launched with their resume command), so that a worker is up when the time comes: the woken wait
 * or retry sleeps in its worker until its exact due time. A due
 * run the store refuses to wake (its Pi session is busy) stays due and is tried again at the next
 * firing or when a session settles. At start the host calls `wakeDue`, which wakes what fell due
 * while it was down.
 */
export class WakeClock {
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  /** The horizon of the last wake pass (its start plus the lead): every run due by then was tried. */
  private lastPass = -1;
  private stopped = false;

  constructor(private readonly deps: WakeClockDeps) {}

  /**
   * Point the timer at the earliest due time not already tried by the last pass (a run its pass could
   * not wake waits for the next firing or a settled session, so a refusal never spins the timer).
   */
  arm(changedRunId?: string): void {
    if (this.stopped) return;
    if (changedRunId !== undefined) this.notice(changedRunId);
    const next = this.deps.store.nextWakeAt(this.lastPass);
    if (next === this.armedFor && (this.timer !== null || next === null)) return;
    this.clear();
    this.armedFor = next;
    if (next === null) return;
    const delay = Math.min(LONGEST_TIMER_MS, Math.max(0, next - WAKE_LEAD_MS - this.deps.now()));
    this.timer = setTimeout(() => this.wakeDue(), delay);
  }

  /** Wake every run due by now plus the lead, in batches, then arm for the next one. */
  wakeDue(): void {
    this.clear();
    if (this.stopped) return;
    this.pass(this.deps.now() + WAKE_LEAD_MS, new Set());
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private pass(horizon: number, tried: Set<string>): void {
    const { store, supervisor, log } = this.deps;
    this.lastPass = horizon;
    try {
      // Runs this pass could not wake are still due: skip past them.
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
      if (due.length >= WAKE_BATCH && !this.stopped) {
        // More may be due: go on after what is queued on the event loop.
        this.timer = setTimeout(() => this.pass(horizon, tried), 0);
        return;
      }
    } catch (error) {
      log(`clock: wake pass failed: ${describeBug(error)}`);
    }
    this.arm();
  }

  /**
   * A run that parked on the clock after the last pass, due within that pass's horizon, was never
   * tried by it: move the horizon back so that the timer covers it.
   */
  private notice(runId: string): void {
    const run = this.deps.store.getRun(runId);
    // A run waiting at an approval gate wakes at its deadline, to take the gate's default.
    const gate = run?.outcome === "waiting" ? this.deps.store.readAnswerCheck(runId)?.timeout : undefined;
    if (gate) {
      if (gate.at <= this.lastPass) this.lastPass = gate.at - 1;
      return;
    }
    if (run?.status !== "parked" || run.paused) return;
    const due = clockDueAt(run.recoveryReason);
    if (due !== null && due <= this.lastPass) this.lastPass = due - 1;
  }

  private clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }
}
