import { type Fence, type RunRecord, workerMethods } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import {
  flatRun,
  expectRefusedBySchema,
  openHarness,
  refused,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
  startingRun,
  unchanged,
} from "./fixtures.js";

const SESSION = "session-1";
const LEASE_MS = 30_000;
const LOST = { kind: "lost", detail: "exit signal SIGKILL" } as const;

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function getRun(store: RunStore, runId: string): RunRecord {
  const run = store.getRun(runId);
  if (!run) throw new Error(`run ${runId} is missing`);
  return run;
}

/** A starting run with a recorded worker launch, as the host does right after spawning. */
function launched(store: RunStore, runId: string, launchId = `launch-${runId}`): Fence {
  const { fence, command } = startingRun(store, runId);
  saved(store.recordWorkerLaunch(fence, { launchId, commandType: command.type, pid: 4242 }));
  return fence;
}

/** A launched run that accepted its command and is running. */
function launchedRunning(store: RunStore, runId: string, launchId = `launch-${runId}`): Fence {
  const fence = launched(store, runId, launchId);
  saved(store.markRunning(fence));
  return fence;
}

function openVisit(store: RunStore, fence: Fence, path = "work", visit = 1): void {
  saved(store.startNodeVisit(fence, { path, visit, nodeKind: "action" }));
}

describe("recordWorkerLaunch", () => {
  it("records the launch with the claim's generation and the progress revision it starts from", () => {
    const { fence, command, revision } = startingRun(h.store, "demo-1");
    const t = h.store.recordWorkerLaunch(fence, {
      launchId: "launch-1",
      commandType: command.type,
      pid: 4242,
    });
    expect(t).toEqual({
      kind: "applied",
      value: {
        launchId: "launch-1",
        runId: "demo-1",
        generation: fence.generation,
        commandType: "start",
        launchRevision: 0,
        pid: 4242,
        exitDecision: null,
      },
    });
    expect(getRun(h.store, "demo-1")).toMatchObject({
      status: "starting",
      launchRevision: 0,
      revision: revision + 1,
      progressRevision: 0,
    });
    expect(h.store.listOpenLaunches().map((l) => l.launchId)).toEqual(["launch-1"]);
    const events = h.store.listRunEvents("demo-1");
    expect(events[events.length - 1]).toMatchObject({
      type: "worker.launched",
      data: { launchId: "launch-1", command: "start" },
    });
  });

  it("saves the current progress revision for a relaunch of a run that already made progress", () => {
    const fence = runningRun(h.store, "demo-1");
    openVisit(h.store, fence);
    saved(
      h.store.finishNodeVisit(fence, {
        path: "work",
        visit: 1,
        result: { status: "succeeded", output: 1, next: "more" },
      }),
    );
    const progress = getRun(h.store, "demo-1").progressRevision;
    expect(progress).toBeGreaterThan(0);
    const launch = saved(
      h.store.recordWorkerLaunch(fence, { launchId: "l-2", commandType: "resume", pid: null }),
    );
    expect(launch).toMatchObject({ launchRevision: progress, commandType: "resume", pid: null });
    expect(getRun(h.store, "demo-1").launchRevision).toBe(progress);
  });

  it("adopts a repeated launch record and changes nothing", () => {
    const { fence } = startingRun(h.store, "demo-1");
    const first = saved(
      h.store.recordWorkerLaunch(fence, { launchId: "launch-1", commandType: "start", pid: 7 }),
    );
    const again = unchanged(h.store, ["demo-1"], () =>
      h.store.recordWorkerLaunch(fence, { launchId: "launch-1", commandType: "start", pid: 7 }),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("refuses a launch ID already used for another run (request_mismatch)", () => {
    launched(h.store, "demo-1", "launch-1");
    const other = startingRun(h.store, "demo-2", { origin: { kind: "cli" } });
    const evidence = refusedWithoutChange(h.store, ["demo-1", "demo-2"], () =>
      h.store.recordWorkerLaunch(other.fence, { launchId: "launch-1", commandType: "start", pid: 8 }),
    );
    expect(evidence).toEqual({ kind: "request_mismatch", resource: "launch", id: "launch-1" });
  });

  it("refuses a stale fence and records nothing", () => {
    const { fence } = startingRun(h.store, "demo-1");
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.recordWorkerLaunch(
        { ...fence, claimToken: "someone-else" },
        {
          launchId: "launch-1",
          commandType: "start",
          pid: 1,
        },
      ),
    );
    expect(evidence).toMatchObject({ kind: "stale_fence", runId: "demo-1", status: "starting" });
    expect(h.store.listOpenLaunches()).toEqual([]);
  });

  it("returns not_found for an unknown run", () => {
    expect(
      refused(
        h.store.recordWorkerLaunch(
          { runId: "ghost", generation: 1, claimToken: "t" },
          { launchId: "l", commandType: "start", pid: 1 },
        ),
      ),
    ).toEqual({ kind: "not_found", resource: "run", id: "ghost" });
  });
});

describe("recordWorkerExit", () => {
  it("fails the run with a reported error's code (decision failed)", () => {
    launchedRunning(h.store, "demo-1", "launch-1");
    const t = h.store.recordWorkerExit({
      launchId: "launch-1",
      exit: {
        kind: "reported",
        phase: "execute",
        error: { code: "worker_failed", message: "Engine crashed." },
      },
    });
    expect(t.kind).toBe("applied");
    expect(saved(t)).toMatchObject({
      decision: "failed",
      launch: { launchId: "launch-1", exitDecision: "failed" },
    });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "failed",
      outcome: "failed",
      errorCode: "worker_failed",
      claimed: false,
    });
    expect(h.store.readRunError("demo-1")).toEqual({ code: "worker_failed", message: "Engine crashed." });
    expect(h.store.listOpenLaunches()).toEqual([]);
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
  });

  it("fails a starting run with the reported bootstrap error, not a generic one", () => {
    launched(h.store, "demo-1", "launch-1");
    const t = h.store.recordWorkerExit({
      launchId: "launch-1",
      exit: {
        kind: "reported",
        phase: "bootstrap",
        error: { code: "workflow_invalid", message: "demo.workflow.ts does not compile." },
      },
    });
    expect(saved(t).decision).toBe("failed");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "failed",
      errorCode: "workflow_invalid",
    });
    expect(h.store.readTerminalFacts("demo-1")).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "failed", duringLaunch: true, error: { code: "workflow_invalid" } } },
    });
  });

  it("parks a fresh start whose worker vanished while starting, frees the session, and resumes it as a start", () => {
    launched(h.store, "demo-1", "launch-1");
    const t = h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST });
    expect(saved(t)).toMatchObject({ decision: "parked", launch: { exitDecision: "parked" } });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "parked",
      recoveryReason: { code: "worker_lost_no_progress", launchId: "launch-1" },
    });
    expect(getRun(h.store, "demo-1")).not.toHaveProperty("outcome");
    expect(getRun(h.store, "demo-1")).toHaveProperty(
      "recoveryReason.message",
      expect.stringContaining("before it accepted its start command"),
    );
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    // Nothing ran: the explicit resume hands the worker the start command again.
    const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    expect(claim.command.type).toBe("start");
  });

  it.each(["lost", "orphaned"] as const)(
    "parks (%s) a resume of a run with saved visits whose worker vanished while starting",
    (kind) => {
      const fence = launchedRunning(h.store, "demo-1", "launch-1");
      openVisit(h.store, fence);
      saved(
        h.store.finishNodeVisit(fence, {
          path: "work",
          visit: 1,
          result: { status: "succeeded", output: { ok: true }, next: "next" },
        }),
      );
      saved(h.store.parkRun(fence, { code: "paused", message: "Paused by request." }));
      const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
      expect(claim.command.type).toBe("resume");
      const resumed = { runId: "demo-1", generation: claim.command.generation, claimToken: "tok-2" };
      saved(h.store.recordWorkerLaunch(resumed, { launchId: "launch-2", commandType: "resume", pid: 4243 }));
      const exit = kind === "lost" ? LOST : { kind, detail: "host died" };
      const t = h.store.recordWorkerExit({ launchId: "launch-2", exit });
      expect(saved(t).decision).toBe("parked");
      expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
        status: "parked",
        errorCode: null,
        recoveryReason: { code: "worker_lost_no_progress", launchId: "launch-2" },
      });
      // The saved visit survives, and one explicit resume goes on from it.
      expect(h.store.listRunSteps("demo-1").map((step) => [step.path, step.status])).toEqual([
        ["work", "succeeded"],
      ]);
      const again = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-3", leaseMs: LEASE_MS }));
      expect(again.command.type).toBe("resume");
    },
  );

  it("still fails a run whose worker reported a startup failure while starting", () => {
    launched(h.store, "demo-1", "launch-1");
    const t = h.store.recordWorkerExit({
      launchId: "launch-1",
      exit: {
        kind: "reported",
        phase: "bootstrap",
        error: { code: "input_invalid", message: "The input does not match the schema." },
      },
    });
    expect(saved(t).decision).toBe("failed");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "failed",
      errorCode: "input_invalid",
    });
  });

  it("parks a run whose worker vanished after finishing a node visit (worker_lost, decision relaunch)", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    openVisit(h.store, fence);
    saved(
      h.store.finishNodeVisit(fence, {
        path: "work",
        visit: 1,
        result: { status: "succeeded", output: { ok: true }, next: "next" },
      }),
    );
    const t = h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST });
    expect(saved(t)).toMatchObject({ decision: "relaunch", launch: { exitDecision: "relaunch" } });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "parked",
      paused: false,
      claimed: false,
      generation: fence.generation + 1,
      recoveryReason: { code: "worker_lost", launchId: "launch-1" },
    });
    // The relaunch resumes the same run from saved state.
    const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    expect(claim.command.type).toBe("resume");
    expect(getRun(h.store, "demo-1")).not.toHaveProperty("recoveryReason");
  });

  it("counts a reserved effect as progress (decision relaunch)", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    openVisit(h.store, fence);
    saved(
      h.store.reserveEffect(fence, {
        effectId: "demo-1/work#1/http:0",
        path: "work",
        visit: 1,
        effectType: "http",
        ordinal: 0,
        mode: "idempotent",
        request: { url: "https://example.test" },
      }),
    );
    expect(saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST })).decision).toBe("relaunch");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({ recoveryReason: { code: "worker_lost" } });
  });

  it("parks a run that made no progress since launch (worker_lost_no_progress) and never relaunches it", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    // Opening a node is not progress: relaunching would repeat exactly the same state.
    openVisit(h.store, fence);
    const t = h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST });
    expect(t.kind).toBe("applied");
    expect(saved(t)).toMatchObject({ decision: "parked", launch: { exitDecision: "parked" } });
    const parked = getRun(h.store, "demo-1");
    expect(flatRun(parked)).toMatchObject({
      status: "parked",
      claimed: false,
      recoveryReason: { code: "worker_lost_no_progress", launchId: "launch-1" },
    });
    expect(h.store.listOpenLaunches()).toEqual([]);
    // A second report of the same exit adopts the saved decision and changes nothing.
    const again = unchanged(h.store, ["demo-1"], () =>
      h.store.recordWorkerExit({
        launchId: "launch-1",
        exit: { kind: "reported", phase: "execute", error: { code: "worker_failed", message: "late" } },
      }),
    );
    expect(again.kind).toBe("adopted");
    expect(saved(again)).toMatchObject({ decision: "parked", launch: { exitDecision: "parked" } });
    expect(getRun(h.store, "demo-1").status).toBe("parked");
  });

  it("stops the loop: progress made before a relaunch does not count for the relaunched worker", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    openVisit(h.store, fence);
    saved(
      h.store.finishNodeVisit(fence, {
        path: "work",
        visit: 1,
        result: { status: "succeeded", output: 1, next: "work" },
      }),
    );
    expect(saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST })).decision).toBe("relaunch");
    const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    const fence2 = { runId: "demo-1", generation: claim.command.generation, claimToken: "tok-2" };
    saved(h.store.recordWorkerLaunch(fence2, { launchId: "launch-2", commandType: "resume", pid: 2 }));
    saved(h.store.markRunning(fence2));
    expect(saved(h.store.recordWorkerExit({ launchId: "launch-2", exit: LOST })).decision).toBe("parked");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      recoveryReason: { code: "worker_lost_no_progress", launchId: "launch-2" },
    });
  });

  it("adopts a repeated exit report for a failed decision", () => {
    launchedRunning(h.store, "demo-1", "launch-1");
    const exit = {
      kind: "reported",
      phase: "execute",
      error: { code: "node_failed", message: "x" },
    } as const;
    const first = saved(h.store.recordWorkerExit({ launchId: "launch-1", exit }));
    expect(
      unchanged(h.store, ["demo-1"], () => h.store.recordWorkerExit({ launchId: "launch-1", exit })),
    ).toEqual({
      kind: "adopted",
      value: first,
    });
  });

  it("decides none for a launch whose claim was superseded, and leaves the new claim alone", () => {
    launched(h.store, "demo-1", "launch-old");
    h.clock.now += LEASE_MS + 1;
    saved(h.store.recoverExpiredStarting({ runId: "demo-1" }));
    const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-new", leaseMs: LEASE_MS }));
    const before = getRun(h.store, "demo-1");
    const t = h.store.recordWorkerExit({ launchId: "launch-old", exit: LOST });
    expect(t.kind).toBe("applied");
    expect(saved(t)).toMatchObject({
      decision: "none",
      launch: { launchId: "launch-old", exitDecision: "none" },
    });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "starting",
      claimed: true,
      generation: before.generation,
      errorCode: null,
      recoveryReason: null,
    });
    const fence = { runId: "demo-1", generation: claim.command.generation, claimToken: "tok-new" };
    expect(h.store.markRunning(fence).kind).toBe("applied");
  });

  it("decides none when the run was cancelled under the worker", () => {
    launchedRunning(h.store, "demo-1", "launch-1");
    saved(h.store.cancelRun({ runId: "demo-1" }));
    expect(saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST })).decision).toBe("none");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({ status: "cancelled", errorCode: "cancelled" });
  });

  it("decides none for a clean exit after the worker finished the run", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    saved(h.store.finishRun(fence, { outcome: "completed", output: { done: true } }));
    const t = h.store.recordWorkerExit({
      launchId: "launch-1",
      exit: { kind: "reported", phase: "shutdown" },
    });
    expect(saved(t).decision).toBe("none");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "done",
      outcome: "completed",
      errorCode: null,
    });
    expect(h.store.readRunFinalOutput("demo-1")).toEqual({ done: true });
  });

  it("decides none when the run already parked at a pause before the worker exited", () => {
    const fence = launchedRunning(h.store, "demo-1", "launch-1");
    saved(h.store.requestPause({ runId: "demo-1" }));
    expect(h.store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "action" }).kind).toBe(
      "recoveryRequired",
    );
    expect(saved(h.store.recordWorkerExit({ launchId: "launch-1", exit: LOST })).decision).toBe("none");
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({ recoveryReason: { code: "paused" } });
  });

  it("returns not_found for an unknown launch and changes nothing", () => {
    launchedRunning(h.store, "demo-1", "launch-1");
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () =>
        h.store.recordWorkerExit({ launchId: "ghost", exit: LOST }),
      ),
    ).toEqual({ kind: "not_found", resource: "launch", id: "ghost" });
  });

  it.each<[string, unknown]>([
    ["an unknown exit kind", { launchId: "launch-1", exit: { kind: "vanished" } }],
    ["an unknown phase", { launchId: "launch-1", exit: { kind: "reported", phase: "teardown" } }],
    ["an oversized detail", { launchId: "launch-1", exit: { kind: "lost", detail: "x".repeat(513) } }],
    [
      "an error code outside the enum",
      {
        launchId: "launch-1",
        exit: { kind: "reported", phase: "execute", error: { code: "oops", message: "" } },
      },
    ],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    // The launch ID is the host's own; what a worker sends is the exit, parsed by worker.exit.
    expectRefusedBySchema(workerMethods["worker.exit"].params, (req as { exit: unknown }).exit);
  });
});

describe("recordWorkerExit of a worker orphaned by a dead host", () => {
  it("returns a run that was still starting to queued, so the new host can activate it again", () => {
    const fence = launched(h.store, "orphan-1");
    const exit = h.store.recordWorkerExit({
      launchId: "launch-orphan-1",
      exit: { kind: "orphaned", detail: "host died" },
    });
    expect(exit).toMatchObject({ kind: "applied", value: { decision: "requeued" } });
    expect(flatRun(getRun(h.store, "orphan-1"))).toMatchObject({
      status: "queued",
      claimed: false,
      generation: fence.generation + 1,
    });
    expect(h.store.markRunning(fence).kind).toBe("conflict");
    const again = saved(h.store.claimRun({ runId: "orphan-1", claimToken: "claim-2", leaseMs: LEASE_MS }));
    expect(again.command.type).toBe("start");
  });

  it("judges a running run by the progress rule, like a lost worker", () => {
    launchedRunning(h.store, "orphan-2");
    const exit = h.store.recordWorkerExit({
      launchId: "launch-orphan-2",
      exit: { kind: "orphaned", detail: "host died" },
    });
    expect(exit).toMatchObject({ kind: "applied", value: { decision: "parked" } });
    expect(getRun(h.store, "orphan-2")).toHaveProperty("recoveryReason.code", "worker_lost_no_progress");
  });
});
