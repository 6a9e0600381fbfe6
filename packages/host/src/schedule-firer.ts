import {
  isTerminalStatus,
  newRunId,
  type RunSummary,
  type ScheduleRecord,
  type Transition,
} from "@piw/protocol";
import type { FiringResult, FiringSource, RunStore } from "@piw/store";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { RunControl } from "./run-control.js";
import type { PreflightRunner } from "./schedule-preflight.js";

export interface ScheduleFirerDeps {
  store: Pick<RunStore, "schedules" | "getRun">;
  control: Pick<RunControl, "afterCreate" | "cancel">;
  preflight: PreflightRunner;
  log: HostLog;
  now(): number;
  /** A firing is about to prepare its run: the idle worker may start loading. */
  launching?: () => void;
  /** A firing finished: the wake clock re-arms for the next due time. */
  fired(): void;
}

/** How many due schedules one clock pass starts firing before it yields. */
const FIRE_BATCH = 50;
/** Preflight children at once: many schedules due on one minute queue here instead of forking together. */
const PREFLIGHTS_AT_ONCE = 4;

/** What a trigger or firing did, as the client sees it. */
export type FiringReply = Transition<{ schedule: ScheduleRecord; run: RunSummary | null }>;

/**
 * Fires due schedules for the wake clock. A firing is async (its workflow is prepared in a preflight
 * child), so a schedule being fired is held out of the clock's due times until its firing is recorded;
 * nothing about it is durable until then, so a host killed mid-firing fires that time again at its start
 * (as the catch-up policy allows), and the firing's request key keeps it to one run.
 */
export class ScheduleFirer {
  private readonly inFlight = new Set<string>();
  private stopped = false;
  private preflights = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly deps: ScheduleFirerDeps) {}

  /** The earliest firing time of a schedule not being fired now, or null. */
  nextDueAt(): number | null {
    const { schedules } = this.deps.store;
    if (this.inFlight.size === 0) return schedules.nextDueAt();
    const due = schedules.listDue(Number.MAX_SAFE_INTEGER, this.inFlight.size + 1);
    return due.find((entry) => !this.inFlight.has(entry.scheduleId))?.dueAt ?? null;
  }

  /** Start firing the schedules due by `now`; true when more may be due (the batch was full). */
  fireDue(now: number): boolean {
    const due = this.deps.store.schedules
      .listDue(now, FIRE_BATCH + this.inFlight.size)
      .filter((entry) => !this.inFlight.has(entry.scheduleId));
    for (const entry of due) this.fireInBackground(entry.scheduleId, "due");
    return due.length >= FIRE_BATCH;
  }

  /** A person's `trigger`: fire now, for now, under the overlap policy; the schedule's times stay. */
  trigger(scheduleId: string): Promise<FiringReply> {
    return this.fire(scheduleId, "manual");
  }

  /** A run changed: when a scheduled run ended and its schedule holds a buffered firing, fire it. */
  runChanged(runId: string): void {
    const run = this.deps.store.getRun(runId);
    if (run?.origin.kind !== "schedule" || !isTerminalStatus(run.status)) return;
    this.fireBufferedIfFree(run.origin.scheduleId);
  }

  /** At host start: buffered firings whose active run ended while no host ran. */
  fireBuffered(): void {
    for (const scheduleId of this.deps.store.schedules.listBuffered()) this.fireBufferedIfFree(scheduleId);
  }

  private fireBufferedIfFree(scheduleId: string): void {
    const launch = this.deps.store.schedules.readLaunch(scheduleId);
    if (launch?.bufferedFor === null || launch === null) return;
    if (this.deps.store.schedules.activeRuns(scheduleId).length > 0) return;
    this.fireInBackground(scheduleId, "buffered");
  }

  /** The host is stopping: a firing whose preflight is under way saves nothing (the next host fires it). */
  stop(): void {
    this.stopped = true;
  }

  /** A firing nobody waits for: its failure is logged by `fire`. */
  private fireInBackground(scheduleId: string, source: FiringSource): void {
    this.fire(scheduleId, source).catch(() => {});
  }

  private async fire(scheduleId: string, source: FiringSource): Promise<FiringReply> {
    if (this.inFlight.has(scheduleId)) {
      return stateMismatch(scheduleId, "not firing", "firing");
    }
    if (this.stopped) return stateMismatch(scheduleId, "due", "not due");
    this.inFlight.add(scheduleId);
    try {
      return await this.fireHeld(scheduleId, source);
    } catch (error) {
      this.deps.log(`schedule ${scheduleId}: firing failed: ${describeBug(error)}`);
      throw error;
    } finally {
      this.inFlight.delete(scheduleId);
      if (!this.stopped) this.deps.fired();
    }
  }

  private async fireHeld(scheduleId: string, source: FiringSource): Promise<FiringReply> {
    const { store, control, log } = this.deps;
    const scheduledFor = this.scheduledTime(scheduleId, source);
    if (typeof scheduledFor !== "number") return scheduledFor;
    const launch = store.schedules.readLaunch(scheduleId);
    if (!launch) return notFound(scheduleId);
    const record = (result: FiringResult): FiringReply => {
      const saved = store.schedules.recordFiring({ scheduleId, scheduledFor, source, result });
      if (saved.kind === "conflict" || saved.kind === "recoveryRequired") return saved;
      const run = saved.value.run;
      const summary =
        run === null ? null : control.afterCreate({ kind: saved.kind, value: run }, `schedule ${scheduleId}`);
      const runSummary =
        summary !== null && (summary.kind === "applied" || summary.kind === "adopted") ? summary.value : null;
      return { kind: saved.kind, value: { schedule: saved.value.schedule, run: runSummary } };
    };
    const active = store.schedules.activeRuns(scheduleId);
    if (active.length > 0) {
      switch (launch.overlap) {
        case "skip":
          return record({ kind: "skipped" });
        case "buffer-one":
          // A buffered firing waits on: it stays buffered until the active run ends.
          if (source === "buffered") return stateMismatch(scheduleId, "due", "not due");
          return record(launch.bufferedFor === null ? { kind: "buffered" } : { kind: "skipped" });
        case "cancel-previous":
          for (const runId of active) control.cancel(runId, "human");
          break;
        case "allow":
          break;
        default:
          return launch.overlap satisfies never;
      }
    }
    this.deps.launching?.();
    const prepared = await this.limited(() =>
      this.deps.preflight({
        workflowRef: launch.workflowRef,
        workingDir: launch.workingDir,
        task: launch.task,
        input: launch.input,
      }),
    );
    if (this.stopped) return stateMismatch(scheduleId, "due", "not due");
    if (!prepared.ok) {
      log(
        `schedule ${scheduleId}: firing for ${new Date(scheduledFor).toISOString()} failed (${prepared.error.code})`,
      );
      return record({ kind: "failed", error: prepared.error });
    }
    if (this.stopped) return stateMismatch(scheduleId, "due", "not due");
    const { title: _t, notes: _n, agentSteps: _a, notifyModel: _m, ...reserve } = prepared.launch;
    return record({
      kind: "started",
      reserve: { ...reserve, runId: newRunId(reserve.workflowName, this.deps.now()) },
    });
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.preflights >= PREFLIGHTS_AT_ONCE) await new Promise<void>((go) => this.waiting.push(go));
    this.preflights += 1;
    try {
      return await work();
    } finally {
      this.preflights -= 1;
      this.waiting.shift()?.();
    }
  }

  /** The time this firing is for; a due schedule's follows the catch-up policy. */
  private scheduledTime(scheduleId: string, source: FiringSource): number | FiringReply {
    const { store } = this.deps;
    switch (source) {
      case "manual":
        return this.deps.now();
      case "buffered": {
        const buffered = store.schedules.readLaunch(scheduleId)?.bufferedFor ?? null;
        return buffered ?? stateMismatch(scheduleId, "due", "not due");
      }
      case "due": {
        const plan = store.schedules.planFiring(scheduleId);
        if (plan.kind === "conflict" || plan.kind === "recoveryRequired") return plan;
        if (plan.value.kind === "fire") return plan.value.scheduledFor;
        return stateMismatch(scheduleId, "due", "not due");
      }
      default:
        return source satisfies never;
    }
  }
}

function notFound(scheduleId: string): FiringReply {
  return { kind: "conflict", evidence: { kind: "not_found", resource: "schedule", id: scheduleId } };
}

function stateMismatch(scheduleId: string, expected: string, actual: string): FiringReply {
  return {
    kind: "conflict",
    evidence: { kind: "state_mismatch", resource: "schedule", id: scheduleId, expected, actual },
  };
}
