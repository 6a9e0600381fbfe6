import type { Fence, RunStatus, TraceEventType } from "@piw/protocol";
import { expect } from "vitest";
import type { RunStore } from "../src/index.js";
import { preparedRun, runningRun, saved, startingRun } from "./fixtures.js";

// The store's own operations that move a run along each edge of the run-status table, and the ones
// that bring a fresh run to a given status or try to move it to another; used by status-writes.test.ts.

function launched(store: RunStore, runId: string, launchId: string): Fence {
  const { fence, command } = startingRun(store, runId);
  saved(store.recordWorkerLaunch(fence, { launchId, commandType: command.type, pid: null }));
  return fence;
}

function parked(store: RunStore, runId: string): void {
  const fence = runningRun(store, runId);
  saved(store.parkRun(fence, { code: "paused", message: "Paused by a test." }));
}

/** A running run with its wait visit `a`#1 open, and the wait's park reason due at `until`. */
function waitingVisit(store: RunStore, runId: string, until: number) {
  const fence = runningRun(store, runId);
  saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "wait" }));
  const reason = { code: "waiting", message: "waiting", path: "a", visit: 1, until } as const;
  return { fence, reason };
}

/** A run parked on the clock, due at the store's time 0 (long past). */
function parkedOnClock(store: RunStore, runId: string): void {
  const { fence, reason } = waitingVisit(store, runId, 0);
  saved(store.parkRun(fence, reason));
}

/**
 * One way the store moves a run along an edge: `setup` brings a fresh run to `from`, `move` makes the
 * change, `writer` is the function that calls `transitionRun` for it, `event` the trace event it records.
 */
export interface Driver {
  from: RunStatus;
  to: RunStatus;
  writer: string;
  how: string;
  event: TraceEventType;
  setup(store: RunStore, runId: string): void;
  move(store: RunStore, runId: string, clock: { now: number }): unknown;
}

const fenceOf = (store: RunStore, runId: string, claimToken = `claim-${runId}`): Fence => {
  const run = store.getRun(runId);
  return { runId, generation: run?.generation ?? 0, claimToken };
};
const reserve = (store: RunStore, runId: string) => saved(store.reservePreparedRun(preparedRun(runId)));
const claim = (store: RunStore, runId: string) =>
  saved(store.claimRun({ runId, claimToken: `claim-${runId}`, leaseMs: 30_000 }));
const claimed = (store: RunStore, runId: string) => startingRun(store, runId);
const running = (store: RunStore, runId: string) => runningRun(store, runId);
const failure = { code: "node_failed", message: "It broke." } as const;

export const DRIVERS: Driver[] = [
  {
    from: "queued",
    to: "starting",
    writer: "claimRun",
    how: "claim",
    event: "run.claimed",
    setup: reserve,
    move: claim,
  },
  {
    from: "queued",
    to: "cancelled",
    writer: "terminalize",
    how: "cancel a queued run",
    event: "run.cancelled",
    setup: reserve,
    move: (store, runId) => saved(store.cancelRun({ runId })),
  },
  {
    from: "starting",
    to: "running",
    writer: "markRunning",
    how: "the worker accepts its command",
    event: "run.running",
    setup: claimed,
    move: (store, runId) => saved(store.markRunning(fenceOf(store, runId))),
  },
  {
    from: "starting",
    to: "parked",
    writer: "parkRow",
    how: "the worker is lost before it accepted its command",
    event: "run.parked",
    setup: (store, runId) => launched(store, runId, `launch-${runId}`),
    move: (store, runId) =>
      saved(
        store.recordWorkerExit({ launchId: `launch-${runId}`, exit: { kind: "lost", detail: "killed" } }),
      ),
  },
  {
    from: "starting",
    to: "failed",
    writer: "terminalize",
    how: "a deferred launch failure",
    event: "run.failed",
    setup: claimed,
    move: (store, runId) =>
      saved(store.finishRun(fenceOf(store, runId), { outcome: "failed", error: failure })),
  },
  {
    from: "starting",
    to: "failed",
    writer: "terminalize",
    how: "the worker reports a startup failure",
    event: "run.failed",
    setup: (store, runId) => launched(store, runId, `launch-${runId}`),
    move: (store, runId) =>
      saved(
        store.recordWorkerExit({
          launchId: `launch-${runId}`,
          exit: {
            kind: "reported",
            phase: "bootstrap",
            error: { code: "source_changed", message: "Changed." },
          },
        }),
      ),
  },
  {
    from: "starting",
    to: "cancelled",
    writer: "terminalize",
    how: "cancel a starting run",
    event: "run.cancelled",
    setup: claimed,
    move: (store, runId) => saved(store.cancelRun({ runId })),
  },
  {
    from: "starting",
    to: "queued",
    writer: "applyWorkerExitVerdict",
    how: "the claim's lease expires with no launch",
    event: "run.lease_expired",
    setup: claimed,
    move: (store, runId, clock) => {
      clock.now += 60_000;
      return saved(store.recoverExpiredStarting({ runId }));
    },
  },
  {
    from: "starting",
    to: "queued",
    writer: "applyWorkerExitVerdict",
    how: "the host died with the worker of a never-run command",
    event: "run.requeued",
    setup: (store, runId) => launched(store, runId, `launch-${runId}`),
    move: (store, runId) =>
      saved(
        store.recordWorkerExit({
          launchId: `launch-${runId}`,
          exit: { kind: "orphaned", detail: "host gone" },
        }),
      ),
  },
  {
    from: "running",
    to: "parked",
    writer: "parkRow",
    how: "the worker parks",
    event: "run.parked",
    setup: running,
    move: (store, runId) =>
      saved(store.parkRun(fenceOf(store, runId), { code: "paused", message: "Paused by a test." })),
  },
  {
    from: "running",
    to: "parked",
    writer: "parkRow",
    how: "a pause request parks at the next node",
    event: "run.parked",
    setup: (store, runId) => {
      running(store, runId);
      saved(store.requestPause({ runId }));
    },
    move: (store, runId) =>
      expect(
        store.startNodeVisit(fenceOf(store, runId), { path: "a", visit: 1, nodeKind: "compute" }).kind,
      ).toBe("recoveryRequired"),
  },
  {
    from: "running",
    to: "parked",
    writer: "parkRow",
    how: "the worker is lost after saving progress, to be relaunched",
    event: "run.parked",
    setup: (store, runId) => {
      const fence = launched(store, runId, `launch-${runId}`);
      saved(store.markRunning(fence));
      saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
      saved(
        store.finishNodeVisit(fence, {
          path: "a",
          visit: 1,
          result: { status: "succeeded", output: 1, next: null },
        }),
      );
    },
    move: (store, runId) =>
      expect(
        saved(
          store.recordWorkerExit({ launchId: `launch-${runId}`, exit: { kind: "lost", detail: "killed" } }),
        ).decision,
      ).toBe("relaunch"),
  },
  {
    from: "running",
    to: "failed",
    writer: "terminalize",
    how: "the worker reports a failure outside any node",
    event: "run.failed",
    setup: (store, runId) => saved(store.markRunning(launched(store, runId, `launch-${runId}`))),
    move: (store, runId) =>
      saved(
        store.recordWorkerExit({
          launchId: `launch-${runId}`,
          exit: { kind: "reported", phase: "execute", error: { code: "worker_failed", message: "Crashed." } },
        }),
      ),
  },
  {
    from: "running",
    to: "done",
    writer: "terminalize",
    how: "complete",
    event: "run.completed",
    setup: running,
    move: (store, runId) =>
      saved(store.finishRun(fenceOf(store, runId), { outcome: "completed", output: 1 })),
  },
  {
    from: "running",
    to: "done",
    writer: "terminalize",
    how: "wait at a checkpoint",
    event: "run.waiting",
    setup: running,
    move: (store, runId) =>
      saved(
        store.finishRun(fenceOf(store, runId), {
          outcome: "waiting",
          checkpoint: { path: "a", visit: 1, prompt: "Approve?" },
          answerCheck: { kind: "worker_only", reason: "refinements" },
        }),
      ),
  },
  {
    from: "running",
    to: "failed",
    writer: "terminalize",
    how: "fail",
    event: "run.failed",
    setup: running,
    move: (store, runId) =>
      saved(store.finishRun(fenceOf(store, runId), { outcome: "failed", error: failure })),
  },
  {
    from: "running",
    to: "failed",
    writer: "terminalize",
    how: "time out",
    event: "run.timed_out",
    setup: running,
    move: (store, runId) =>
      saved(
        store.finishRun(fenceOf(store, runId), {
          outcome: "timed_out",
          error: { code: "node_timed_out", message: "Too slow." },
        }),
      ),
  },
  {
    from: "running",
    to: "cancelled",
    writer: "terminalize",
    how: "cancel a running run",
    event: "run.cancelled",
    setup: running,
    move: (store, runId) => saved(store.cancelRun({ runId })),
  },
  {
    from: "parked",
    to: "starting",
    writer: "claimRun",
    how: "resume",
    event: "run.claimed",
    setup: parked,
    move: (store, runId) => saved(store.claimRun({ runId, claimToken: "claim-resume", leaseMs: 30_000 })),
  },
  {
    from: "running",
    to: "parked",
    writer: "parkRow",
    how: "a wait node parks the run on the clock",
    event: "run.parked",
    setup: (store, runId) => {
      waitingVisit(store, runId, 0);
    },
    move: (store, runId) => {
      const fence = fenceOf(store, runId);
      return saved(
        store.parkRun(fence, { code: "waiting", message: "waiting", path: "a", visit: 1, until: 5 }),
      );
    },
  },
  {
    from: "parked",
    to: "starting",
    writer: "claimRun",
    how: "the clock wakes a run whose wait is due",
    event: "run.claimed",
    setup: parkedOnClock,
    move: (store, runId) =>
      saved(store.claimRun({ runId, claimToken: "claim-wake", leaseMs: 30_000, wake: true })),
  },
  {
    from: "parked",
    to: "cancelled",
    writer: "terminalize",
    how: "cancel a run waiting on the clock",
    event: "run.cancelled",
    setup: parkedOnClock,
    move: (store, runId) => saved(store.cancelRun({ runId })),
  },
  {
    from: "parked",
    to: "cancelled",
    writer: "terminalize",
    how: "cancel a parked run",
    event: "run.cancelled",
    setup: parked,
    move: (store, runId) => saved(store.cancelRun({ runId })),
  },
];

/** A fresh run in `status`, by the store's own operations; a CLI run, so many can be active at once. */
export function runIn(store: RunStore, runId: string, status: RunStatus): void {
  const cli = { origin: { kind: "cli" } } as const;
  const live = () => runningRun(store, runId, cli);
  switch (status) {
    case "queued":
      saved(store.reservePreparedRun(preparedRun(runId, cli)));
      return;
    case "starting":
      startingRun(store, runId, cli);
      return;
    case "running":
      live();
      return;
    case "parked":
      saved(store.parkRun(live(), { code: "paused", message: "Paused by a test." }));
      return;
    case "done":
      saved(store.finishRun(live(), { outcome: "completed", output: 1 }));
      return;
    case "failed":
      saved(store.finishRun(live(), { outcome: "failed", error: failure }));
      return;
    case "cancelled":
      saved(store.reservePreparedRun(preparedRun(runId, cli)));
      saved(store.cancelRun({ runId }));
      return;
    default:
      status satisfies never;
  }
}

/** The store operation whose change moves a run to `to`, called with whatever claim the run holds. */
export function moveTo(store: RunStore, runId: string, to: RunStatus) {
  const run = store.getRun(runId);
  const fence = { runId, generation: run?.generation ?? 0, claimToken: `claim-${runId}` };
  switch (to) {
    case "queued":
      return store.recoverExpiredStarting({ runId });
    case "starting":
      return store.claimRun({ runId, claimToken: "claim-other", leaseMs: 30_000 });
    case "running":
      return store.markRunning(fence);
    case "parked":
      return store.parkRun(fence, { code: "paused", message: "Paused by a test." });
    case "done":
      return store.finishRun(fence, { outcome: "completed", output: 2 });
    case "failed":
      return store.finishRun(fence, { outcome: "failed", error: failure });
    case "cancelled":
      return store.cancelRun({ runId });
    default:
      return to satisfies never;
  }
}
