import { type Handlers, RpcError, type workerMethods } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import type { AgentProgressBoard } from "./agent-progress-board.js";
import { describeBug, guardHandlers } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { LiveWorker } from "./live-worker.js";
import { groupLeaderOf } from "./process-groups.js";

export interface WorkerChannelDeps {
  store: RunStore;
  log: HostLog;
  /** Where isolated agent steps' latest progress is kept for the run views. */
  progress: AgentProgressBoard;
  /** The run changed: reconcile presentation and waits, publish its view. */
  runChanged(runId: string): void;
}

/**
 * The host side of the worker protocol for one launch. The worker never sends a fence: every store
 * call carries this launch's own, so a superseded worker only ever gets conflicts back.
 */
export function workerHandlers(deps: WorkerChannelDeps, worker: LiveWorker): Handlers<typeof workerMethods> {
  const { store } = deps;
  const { fence, runId } = worker;
  const changed = <T>(result: T): T => {
    deps.runChanged(runId);
    return result;
  };
  const handlers: Handlers<typeof workerMethods> = {
    "worker.hello": ({ launchId }) => {
      if (launchId !== worker.launchId) {
        deps.log(
          `worker ${worker.launchId}: said hello as ${launchId.slice(0, 80)}; using the channel's launch`,
        );
      }
      const run = store.getRun(runId);
      if (!run) throw new RpcError("not_found", `Run ${runId} does not exist.`);
      if (worker.phase.kind === "launching") {
        worker.advance({ type: "hello" });
        deps.runChanged(runId);
      }
      return { command: worker.command, run, snapshot: store.readRunSnapshot(runId) };
    },
    "run.markRunning": () => changed(store.markRunning(fence)),
    "visit.start": (params) => changed(store.startNodeVisit(fence, params)),
    "visit.finish": (params) => changed(store.finishNodeVisit(fence, params)),
    "visit.advance": (params) => changed(store.advanceNodeVisit(fence, params)),
    "effect.reserve": (params) => changed(store.reserveEffect(fence, params)),
    "effect.settle": (params) => changed(store.settleEffect(fence, params)),
    "message.enqueue": (params) => changed(store.enqueueMessage(fence, params)),
    "run.finish": (params) => changed(store.finishRun(fence, params)),
    "run.park": (params) => changed(store.parkRun(fence, params)),
    "visit.schedule": (params) => store.scheduleVisit(fence, params),
    "run.redefine": (params) => changed(store.redefineRun(fence, params)),
    "agent.next": (key) => worker.agent.next(key),
    "agent.verdict": ({ submissionId, verdict }) => {
      worker.agent.verdict(submissionId, verdict);
      return { ok: true as const };
    },
    "agent.progress": (progress) => {
      deps.progress.set(runId, progress);
      deps.runChanged(runId);
      return { ok: true as const };
    },
    "worker.processGroup": ({ pgid, alive }) => {
      if (!alive) {
        worker.processGroups.delete(pgid);
        return { ok: true as const };
      }
      // Only a group that this worker's own child leads: the host never kills anything else.
      const leader = worker.process.pid === null ? "foreign" : groupLeaderOf(pgid, worker.process.pid);
      if (leader === "child") worker.processGroups.add(pgid);
      else if (leader === "foreign") {
        deps.log(`worker ${worker.launchId}: process group ${pgid} is not its child's; not tracked`);
      }
      return { ok: true as const };
    },
    "worker.exit": (exit) => {
      const recorded = store.recordWorkerExit({ launchId: worker.launchId, exit });
      if (recorded.kind === "applied" || recorded.kind === "adopted")
        worker.advance({ type: "reported", decision: recorded.value.decision });
      deps.log(
        `worker ${worker.launchId}: reported ${exit.kind === "reported" ? exit.phase : exit.kind} exit${
          exit.kind === "reported" && exit.error ? ` (${exit.error.code})` : ""
        }; decision ${worker.reported ?? recorded.kind}`,
      );
      deps.runChanged(runId);
      return { ok: true as const };
    },
  };
  return guardHandlers(handlers, (method, error) =>
    deps.log(`worker ${worker.launchId}: ${method} failed: ${describeBug(error)}`),
  );
}
