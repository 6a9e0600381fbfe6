import {
  addSpend,
  type Handlers,
  RpcError,
  WORKER_WRITES,
  type WorkerParams,
  type workerMethods,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";
import type { AgentProgressBoard } from "./agent-progress-board.js";
import type { GroupCommitter } from "./group-committer.js";
import { describeBug, guardHandlers } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { LiveWorker } from "./live-worker.js";
import type { PiSdkLocation } from "./pi-sdk-location.js";
import { groupLeaderOf } from "./process-groups.js";

export interface WorkerChannelDeps {
  store: RunStore;
  log: HostLog;
  /** Where isolated agent steps' latest progress is kept for the run views. */
  progress: AgentProgressBoard;
  /** Pi's SDK as a connected Pi reported it, handed to the worker for isolated agent steps. */
  piSdk: Pick<PiSdkLocation, "entry">;
  /** The run changed: reconcile presentation and waits, publish its view. */
  runChanged(runId: string): void;
  /** Where the durable writes go: committed with the other workers' in one transaction. */
  committer: GroupCommitter;
}

/**
 * The host side of the worker protocol for one launch. The worker never sends a fence: every store
 * call carries this launch's own, so a superseded worker only ever gets conflicts back.
 */
export function workerHandlers(deps: WorkerChannelDeps, worker: LiveWorker): Handlers<typeof workerMethods> {
  const { store, committer } = deps;
  const { fence, runId } = worker;
  // The channel's writes not yet committed. Any other request waits for them, so a worker's requests
  // act in the order it sent them; writes never wait for each other (they share one commit).
  const uncommitted = new Set<Promise<unknown>>();
  const commit = <T>(write: () => T): Promise<T> => {
    const done = committer.submit(runId, write);
    const settled: Promise<unknown> = done.then(
      () => uncommitted.delete(settled),
      () => uncommitted.delete(settled),
    );
    uncommitted.add(settled);
    return done;
  };
  const endRun = () => {
    deps.progress.endRun(runId);
    worker.liveSpend.clear();
  };
  const visitOver = (visit: { path: string; visit: number }) =>
    deps.progress.finishVisit(runId, visit.path, visit.visit);
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
      const piSdkEntry = deps.piSdk.entry();
      // The starting client's environment goes to this worker only: never to a view or a log line.
      const env = store.readRunEnv(runId);
      return {
        command: worker.command,
        run,
        snapshot: store.readRunSnapshot(runId),
        ...(piSdkEntry === undefined ? {} : { piSdkEntry }),
        ...(env === null ? {} : { env }),
      };
    },
    "run.markRunning": () => commit(() => store.markRunning(fence)),
    "visit.start": (params) => commit(() => store.startNodeVisit(fence, params)),
    "visit.finish": (params) =>
      afterCommit(
        commit(() => store.finishNodeVisit(fence, params)),
        () => visitOver(params),
      ),
    "visit.advance": (params) =>
      afterCommit(
        commit(() => store.advanceNodeVisit(fence, params)),
        () => visitOver(params.finish),
      ),
    "effect.reserve": (params) => commit(() => store.reserveEffect(fence, params)),
    "effect.settle": (params) =>
      commit(() => {
        const settled = store.settleEffect(fence, params);
        // An isolated session's record: its usage is saved spend from here on, not live.
        worker.liveSpend.saved(params.effectId);
        return settled;
      }),
    "message.enqueue": (params) => commit(() => store.enqueueMessage(fence, params)),
    "run.finish": (params) =>
      afterCommit(
        commit(() => store.finishRun(fence, params)),
        endRun,
      ),
    "run.park": (params) =>
      afterCommit(
        commit(() => store.parkRun(fence, params)),
        endRun,
      ),
    "visit.schedule": (params) => commit(() => store.scheduleVisit(fence, params)),
    "budget.check": (params) => commit(() => checkLiveBudget(store, worker, params)),
    "run.redefine": (params) => commit(() => store.redefineRun(fence, params)),
    "agent.next": (key) => worker.agent.next(key),
    "agent.verdict": ({ submissionId, verdict }) => {
      worker.agent.verdict(submissionId, verdict);
      return { ok: true as const };
    },
    "agent.progress": (progress) => {
      deps.progress.set(runId, progress, worker.launchId);
      deps.runChanged(runId);
      return { ok: true as const };
    },
    "agent.live": ({ path, visit, attempt, live }) => {
      deps.progress.live.set(runId, { path, visit, attempt }, live, worker.launchId);
      return { ok: true as const };
    },
    "node.progress": (report) => {
      const saved = store.saveNodeProgress(fence, report);
      if (saved.kind === "applied") deps.runChanged(runId);
      return { saved: saved.kind === "applied" };
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
  const ordered = afterUncommitted(handlers, uncommitted);
  return guardHandlers(ordered, (method, error) =>
    deps.log(`worker ${worker.launchId}: ${method} failed: ${describeBug(error)}`),
  );
}

/**
 * A budget check against the run's live spend: the saved spend plus every live isolated session's
 * unsaved usage (the one asking included, with its latest report), so parallel branches stop at the
 * run's limit together. Once the run is parked or the claim is gone, its sessions count no more: their
 * records are saved as they stop.
 */
function checkLiveBudget(store: RunStore, worker: LiveWorker, params: WorkerParams<"budget.check">) {
  if (params.session !== undefined) worker.liveSpend.report(params.session, params.pending);
  const live = worker.liveSpend.pending();
  const pending = params.session === undefined ? addSpend(live, params.pending) : live;
  const checked = store.checkBudget(worker.fence, { ...params, pending });
  if (checked.kind === "conflict" || checked.kind === "recoveryRequired") worker.liveSpend.clear();
  return checked;
}

/** Every method but the durable writes first waits for the channel's writes still being committed. */
function afterUncommitted(
  handlers: Handlers<typeof workerMethods>,
  uncommitted: Set<Promise<unknown>>,
): Handlers<typeof workerMethods> {
  const writes = new Set<string>(WORKER_WRITES);
  const ordered: Record<string, (params: never) => unknown> = {};
  for (const [method, handler] of Object.entries(handlers) as Array<[string, (params: never) => unknown]>) {
    ordered[method] = writes.has(method)
      ? handler
      : (params: never) =>
          uncommitted.size === 0 ? handler(params) : Promise.all(uncommitted).then(() => handler(params));
  }
  return ordered as Handlers<typeof workerMethods>;
}

/** `then` once `write` is committed, whatever it decided; the write's own result is passed on. */
async function afterCommit<T>(write: Promise<T>, then: () => void): Promise<T> {
  const result = await write;
  then();
  return result;
}
