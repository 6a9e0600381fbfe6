import type { ClockReason, Fence } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import { claimRunning, effectIdFor, openHarness, type StoreHarness, saved, startingRun } from "./fixtures.js";

// A visit's deadline counts only the time a worker executed the visit: never the time its run was
// parked, waited for a resume, or had no live worker because its host was dead.

const TIMEOUT_MS = 600_000;
const MINUTE = 60_000;

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

/** A claimed run with a recorded worker launch, running: as the host and its worker leave it. */
function launchedRunning(store: RunStore, runId: string, launchId: string): Fence {
  const { fence, command } = startingRun(store, runId);
  saved(store.recordWorkerLaunch(fence, { launchId, commandType: command.type, pid: 4242 }));
  saved(store.markRunning(fence));
  return fence;
}

/** Claim the parked run again, record its launch and reopen the `loop` visit: returns its deadline. */
function resumeAndReopen(runId: string, claimToken: string): { at: number; attempt: number } {
  const claim = saved(h.store.claimRun({ runId, claimToken, leaseMs: 30_000 }));
  const fence = { runId, generation: claim.command.generation, claimToken };
  saved(
    h.store.recordWorkerLaunch(fence, { launchId: `launch-${claimToken}`, commandType: "resume", pid: 1 }),
  );
  saved(h.store.markRunning(fence));
  const reopened = saved(
    h.store.startNodeVisit(fence, { path: "loop", visit: 1, nodeKind: "action", timeoutMs: TIMEOUT_MS }),
  );
  if (reopened.status !== "running" || reopened.deadline == null) {
    throw new Error(`expected an open visit with a deadline, got ${JSON.stringify(reopened)}`);
  }
  return { at: reopened.deadline.at, attempt: reopened.attempt };
}

function openLoop(fence: Fence): number {
  const opened = saved(
    h.store.startNodeVisit(fence, { path: "loop", visit: 1, nodeKind: "action", timeoutMs: TIMEOUT_MS }),
  );
  if (opened.status !== "running" || opened.deadline == null) throw new Error("no deadline");
  return opened.deadline.at;
}

/** The `loop` visit's worker reserves its effect: durable progress, and a change of the run. */
function reserveMark(fence: Fence): void {
  const effectId = effectIdFor(fence.runId, "loop", 1, "mark");
  const effect = {
    effectId,
    path: "loop",
    visit: 1,
    effectType: "mark",
    ordinal: 0,
    mode: "idempotent",
  } as const;
  saved(h.store.reserveEffect(fence, { ...effect, request: {} }));
}

/** A new host's start-up judgement of a launch whose worker died with the previous host. */
function judgeOrphaned(launchId: string): string {
  const exit = { kind: "orphaned", detail: "The host restarted while the worker ran." } as const;
  return saved(h.store.recordWorkerExit({ launchId, exit })).decision;
}

describe("a visit's deadline clock", () => {
  it("stands still while the run is parked after a lost worker, and a resume gets what was left", () => {
    const fence = launchedRunning(h.store, "d-1", "launch-1");
    const first = openLoop(fence);
    expect(first).toBe(h.clock.now + TIMEOUT_MS);
    // The action works for 2 minutes, then its worker is killed before it saved progress: the run parks.
    h.clock.now += 2 * MINUTE;
    const exit = saved(
      h.store.recordWorkerExit({ launchId: "launch-1", exit: { kind: "lost", detail: "kill" } }),
    );
    expect(exit.decision).toBe("parked");
    expect(h.store.getRun("d-1")).toHaveProperty("recoveryReason.code", "worker_lost_no_progress");
    // Parked longer than the whole timeout, then resumed explicitly.
    h.clock.now += 11.5 * MINUTE;
    const reopened = resumeAndReopen("d-1", "resume-1");
    expect(reopened.attempt).toBe(2);
    expect(reopened.at - h.clock.now).toBe(TIMEOUT_MS - 2 * MINUTE);
    expect(h.store.listRunSteps("d-1")[0]).toMatchObject({ deadlineAt: reopened.at, attempt: 2 });
  });

  it("keeps the first stop when a resume's worker is lost before it reopened the visit", () => {
    const fence = launchedRunning(h.store, "d-2", "launch-1");
    openLoop(fence);
    h.clock.now += 1 * MINUTE;
    saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: { kind: "lost", detail: "kill" } }));
    // A resume whose worker dies before it accepted its command: the visit never ran again.
    h.clock.now += 20 * MINUTE;
    const claim = saved(h.store.claimRun({ runId: "d-2", claimToken: "resume-1", leaseMs: 30_000 }));
    const starting = { runId: "d-2", generation: claim.command.generation, claimToken: "resume-1" };
    saved(h.store.recordWorkerLaunch(starting, { launchId: "launch-2", commandType: "resume", pid: 2 }));
    h.clock.now += 5 * MINUTE;
    saved(h.store.recordWorkerExit({ launchId: "launch-2", exit: { kind: "lost", detail: "kill" } }));
    expect(h.store.getRun("d-2")?.status).toBe("parked");
    h.clock.now += 30 * MINUTE;
    const reopened = resumeAndReopen("d-2", "resume-2");
    expect(reopened.at - h.clock.now).toBe(TIMEOUT_MS - 1 * MINUTE);
  });

  it("stands still while a pause holds the run, and counts every stretch the visit ran", () => {
    const fence = launchedRunning(h.store, "d-3", "launch-1");
    openLoop(fence);
    h.clock.now += 3 * MINUTE;
    // The step's turn was aborted (a pause): the worker parks the run with the visit open.
    saved(h.store.parkRun(fence, { code: "paused", message: "Paused during loop." }));
    h.clock.now += 60 * MINUTE;
    const again = claimRunning(h.store, "d-3", "resume-1");
    const reopened = saved(
      h.store.startNodeVisit(again, { path: "loop", visit: 1, nodeKind: "action", timeoutMs: TIMEOUT_MS }),
    );
    expect(reopened).toMatchObject({ attempt: 2, deadline: { at: h.clock.now + TIMEOUT_MS - 3 * MINUTE } });
    // Four more minutes of work, a lost worker after progress (relaunched at once), a minute later.
    h.clock.now += 4 * MINUTE;
    reserveMark(again);
    saved(h.store.parkRun(again, { code: "worker_lost", message: "lost", launchId: "launch-1" }));
    h.clock.now += 1 * MINUTE;
    const relaunched = claimRunning(h.store, "d-3", "relaunch-1");
    const last = saved(
      h.store.startNodeVisit(relaunched, {
        path: "loop",
        visit: 1,
        nodeKind: "action",
        timeoutMs: TIMEOUT_MS,
      }),
    );
    expect(last).toMatchObject({ attempt: 3, deadline: { at: h.clock.now + TIMEOUT_MS - 7 * MINUTE } });
  });

  it("gives a retry attempt its whole deadline from when it reopens, if that is after its due time", () => {
    const fence = launchedRunning(h.store, "d-4", "launch-1");
    openLoop(fence);
    h.clock.now += 1 * MINUTE;
    const at = h.clock.now + 1_000;
    const reason: ClockReason = {
      code: "retry_waiting",
      message: "attempt 2 of 3",
      path: "loop",
      visit: 1,
      attempt: 2,
      attempts: 3,
      at,
      lastError: "node_failed",
    };
    saved(h.store.parkRun(fence, reason));
    // No host ran for an hour after the attempt was due.
    h.clock.now = at + 60 * MINUTE;
    const reopened = resumeAndReopen("d-4", "wake-1");
    expect(reopened.at - h.clock.now).toBe(TIMEOUT_MS);
  });
});

describe("a visit's deadline clock across a dead host", () => {
  it("stops at the host's last heartbeat for the launch, not when the next host judges it", () => {
    const fence = launchedRunning(h.store, "h-1", "launch-1");
    openLoop(fence);
    // The host's heartbeat sees the worker alive 30 s into the visit; the host then dies with it.
    h.clock.now += 30_000;
    h.store.markLaunchesAlive(["launch-1"]);
    h.clock.now += 4_000;
    // The next host starts an hour later on the same file and judges the orphaned launch.
    h.reopen();
    h.clock.now += 60 * MINUTE;
    expect(judgeOrphaned("launch-1")).toBe("parked");
    h.clock.now += 15 * MINUTE;
    const reopened = resumeAndReopen("h-1", "resume-1");
    expect(reopened.at - h.clock.now).toBe(TIMEOUT_MS - 30_000);
  });

  it("stops no earlier than the run's last saved change, which the lost worker made", () => {
    const fence = launchedRunning(h.store, "h-2", "launch-1");
    openLoop(fence);
    h.clock.now += 30_000;
    h.store.markLaunchesAlive(["launch-1"]);
    // Ten seconds after the heartbeat the worker reserves an effect (progress), then the host dies.
    h.clock.now += 10_000;
    reserveMark(fence);
    h.reopen();
    h.clock.now += 60 * MINUTE;
    expect(judgeOrphaned("launch-1")).toBe("relaunch");
    const reopened = resumeAndReopen("h-2", "relaunch-1");
    expect(reopened.at - h.clock.now).toBe(TIMEOUT_MS - 40_000);
  });

  it("leaves a launch that already ended out of the heartbeat", () => {
    const fence = launchedRunning(h.store, "h-3", "launch-1");
    openLoop(fence);
    h.clock.now += 5_000;
    saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: { kind: "lost", detail: "kill" } }));
    const before = h.store.getRun("h-3");
    h.clock.now += 5_000;
    h.store.markLaunchesAlive(["launch-1", "no-such-launch"]);
    expect(h.store.getRun("h-3")).toEqual(before);
    h.clock.now += 10 * MINUTE;
    expect(resumeAndReopen("h-3", "resume-1").at - h.clock.now).toBe(TIMEOUT_MS - 5_000);
  });
});
