import type { RunStore } from "@piw/store";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { Supervisor } from "./supervisor.js";
import type { DueSource } from "./wake-clock.js";

export interface WallBudgetsDeps {
  store: Pick<RunStore, "getRun" | "readBudgetState" | "checkBudget" | "listRunSteps">;
  supervisor: Pick<Supervisor, "currentWorker" | "cancelWorkers" | "runChanged">;
  log: HostLog;
  now(): number;
}

/**
 * The wall-time limits of running runs, kept by the host's one clock: a run's time budget falls due
 * when its workers' time reaches `wallMs`, whatever step runs then (a long model call, a shell
 * command). At that time the store parks the run with `budget_exceeded` under its worker's claim; the
 * worker is told to stop and a Pi turn of the run is aborted by its view, as for any budget park.
 */
export class WallBudgets implements DueSource {
  readonly name = "wall budgets";
  /** Running runs with a wall limit: when it falls due, as last computed. */
  private readonly due = new Map<string, number>();

  constructor(private readonly deps: WallBudgetsDeps) {}

  nextAt(): number | null {
    let next: number | null = null;
    for (const at of this.due.values()) if (next === null || at < next) next = at;
    return next;
  }

  runDue(now: number): boolean {
    for (const [runId, at] of [...this.due]) {
      if (at > now) continue;
      this.due.delete(runId);
      try {
        this.reached(runId);
      } catch (error) {
        this.deps.log(`run ${runId}: wall budget check failed: ${describeBug(error)}`);
      }
    }
    return false;
  }

  /** Only a running run's time counts down: it is due once its remaining time has passed. */
  notice(runId: string): void {
    const remaining = this.remaining(runId);
    if (remaining === null) this.due.delete(runId);
    else this.due.set(runId, this.deps.now() + remaining);
  }

  private remaining(runId: string): number | null {
    const { store } = this.deps;
    const run = store.getRun(runId);
    const limit = run?.status === "running" ? run.budget?.wallMs : undefined;
    if (limit === undefined) return null;
    const state = store.readBudgetState(runId);
    return state === null ? null : Math.max(0, limit - state.spend.wallMs);
  }

  private reached(runId: string): void {
    const { store, supervisor, log } = this.deps;
    const remaining = this.remaining(runId);
    if (remaining === null) return;
    // The clock fires a little early or the run paused between: not yet.
    if (remaining > 0) {
      this.due.set(runId, this.deps.now() + remaining);
      return;
    }
    const worker = supervisor.currentWorker(runId);
    if (worker === undefined) return;
    const steps = store.listRunSteps(runId);
    const open = steps.findLast((step) => step.status === "running") ?? steps.at(-1);
    if (open === undefined) return;
    const parked = store.checkBudget(worker.fence, {
      path: open.path,
      visit: open.visit,
      when: "during_turn",
      pending: worker.liveSpend.pending(),
    });
    if (parked.kind !== "recoveryRequired") return;
    log(`run ${runId}: reached its wall budget during ${open.path}; parked, its worker stops`);
    supervisor.runChanged(runId);
    supervisor.cancelWorkers(runId);
  }
}
