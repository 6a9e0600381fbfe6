import type { RunStore } from "@piw/store";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { RunControl } from "./run-control.js";
import type { Supervisor } from "./supervisor.js";

export interface ReconcileDeps {
  store: RunStore;
  supervisor: Supervisor;
  control: RunControl;
  log: HostLog;
  now(): number;
  /** Runs read per page (the store's default); every run is read, whatever the count. */
  pageSize?: number;
}

function attempt(log: HostLog, what: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    log(`reconcile: ${what} failed: ${describeBug(error)}`);
  }
}

/**
 * Start-up reconciliation of every non-terminal run (progress/never-ran rules): workers of the previous host are
 * gone, so their launches are judged by the store's one exit rule (`decideWorkerExit`); expired
 * `starting` claims with no launch go through the same rule; CLI runs activate; terminal runs whose
 * messages were never created get them now.
 */
export function reconcileAtStart(deps: ReconcileDeps): void {
  const { store, supervisor, control, log, pageSize } = deps;
  for (const launch of store.listOpenLaunches()) {
    attempt(log, `launch ${launch.launchId}`, () => {
      const judged = store.recordWorkerExit({
        launchId: launch.launchId,
        exit: { kind: "orphaned", detail: "The host restarted while the worker ran." },
      });
      const decision =
        judged.kind === "applied" || judged.kind === "adopted" ? judged.value.decision : judged.kind;
      log(
        `reconcile: run ${launch.runId}: worker ${launch.launchId} lost with the previous host; ${decision}`,
      );
      if (decision === "requeued") supervisor.runChanged(launch.runId);
    });
  }
  sweepExpiredStarting(deps);
  for (const run of store.eachRun(["queued"], pageSize)) {
    control.activateIfCli(run, "queued before the host restarted");
  }
  // `worker_lost` means a relaunch was decided; the previous host may have died before it happened.
  for (const run of store.eachRun(["parked"], pageSize)) {
    if (run.recoveryReason.code !== "worker_lost") continue;
    attempt(log, `relaunch of ${run.runId}`, () => {
      supervisor.activate(run.runId, "relaunch after progress (host restarted)");
    });
  }
  for (const runId of store.listRunsNeedingPresentation()) supervisor.present(runId);
}

/**
 * `starting` runs whose lease expired. With no worker of this host, nothing ran: a command that never
 * ran returns to `queued` (the never-ran rule) and CLI runs activate again; a resume parks. A worker that is
 * alive but never accepted its command within the lease is hung in bootstrap: it is killed, and its
 * exit is judged like any lost worker's (the run parks, resumable).
 */
export function sweepExpiredStarting(deps: ReconcileDeps): void {
  const { store, supervisor, control, log, pageSize } = deps;
  const now = deps.now();
  for (const run of store.eachRun(["starting"], pageSize)) {
    if (run.leaseExpiresAt > now) continue;
    if (supervisor.hasLiveWorker(run.runId)) {
      supervisor.killWorkers(run.runId, "it did not accept its command before the claim's lease expired");
      continue;
    }
    attempt(log, `lease recovery of ${run.runId}`, () => {
      const recovered = store.recoverExpiredStarting({ runId: run.runId });
      if (recovered.kind !== "applied") return;
      log(`run ${run.runId}: lease expired before its worker began; ${recovered.value.status} again`);
      supervisor.runChanged(run.runId);
      control.activateIfCli(recovered.value, "lease expired");
    });
  }
}
