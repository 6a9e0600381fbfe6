import { RUN_PAGE_SIZE, RunStore } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { FLOWS, type Sandbox, sandbox, start, writeWorkflow } from "./host-fixture.js";

// Start-up reconciliation must reach every queued, parked and starting run, however many there are:
// it reads them a page at a time. These tests seed a real state file, then start a real host on it.

let box: Sandbox;
let host: RunningHost | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  await host?.stop();
  host = undefined;
  box.cleanup();
});

// A worker process that never says hello: activation is all these tests look at, not the run.
const IDLE_WORKER = [process.execPath, "-e", "setTimeout(() => {}, 60_000)"];
const LATER = () => Date.now() + 60_000;

type Reserve = Awaited<ReturnType<typeof writeWorkflow>>["reserve"];

/** Pi runs whose claim expired with no launch, as a host killed between claim and launch leaves them. */
function expiredStarting(store: RunStore, reserve: Reserve, count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const runId = `stale-${String(i).padStart(5, "0")}`;
    store.reservePreparedRun({ ...reserve({ n: 1 }, { kind: "pi", sessionId: `s-${i}` }), runId });
    if (store.claimRun({ runId, claimToken: `old-${i}`, leaseMs: 1000 }).kind !== "applied")
      throw new Error(runId);
    return runId;
  });
}

function launches(runId: string): number {
  return host?.reader.listRunEvents(runId).filter((e) => e.type === "worker.launched").length ?? -1;
}

describe("start-up reconciliation reads every run, a page at a time", () => {
  it("sweeps, activates and relaunches more runs of each status than one page holds", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const store = RunStore.open({ stateDir: box.stateDir });
    const stale = expiredStarting(store, flow.reserve, 7);
    const queued = Array.from({ length: 4 }, (_, i) => {
      const runId = `queued-${i}`;
      store.reservePreparedRun({ ...flow.reserve({ n: 1 }), runId });
      return runId;
    });
    // Workers that saved progress and were lost: the store decided a relaunch the host never made.
    const lost = Array.from({ length: 4 }, (_, i) => {
      const runId = `lost-${i}`;
      store.reservePreparedRun({ ...flow.reserve({ n: 1 }), runId });
      const fence = { runId, generation: 1, claimToken: `lost-${i}` };
      expect(store.claimRun({ runId, claimToken: fence.claimToken, leaseMs: 60_000 }).kind).toBe("applied");
      store.recordWorkerLaunch(fence, { launchId: `launch-${i}`, commandType: "start", pid: null });
      store.markRunning(fence);
      store.startNodeVisit(fence, { path: "one", visit: 1, nodeKind: "compute" });
      store.finishNodeVisit(fence, {
        path: "one",
        visit: 1,
        result: { status: "succeeded", output: 1, next: "two" },
      });
      store.recordWorkerExit({ launchId: `launch-${i}`, exit: { kind: "orphaned", detail: "test" } });
      expect(store.getRun(runId)).toMatchObject({
        status: "parked",
        recoveryReason: { code: "worker_lost" },
      });
      return runId;
    });
    store.close();

    // Every relaunch at once: this is about paging, not the worker cap (worker-cap.test.ts).
    host = await start(box, {
      reconcilePageSize: 3,
      workerCommand: IDLE_WORKER,
      now: LATER,
      maxWorkers: 100,
    });
    const reader = host.reader;
    expect(stale.map((id) => reader.getRun(id)?.status)).toEqual(stale.map(() => "queued"));
    expect(queued.map((id) => [reader.getRun(id)?.status, launches(id)])).toEqual(
      queued.map(() => ["starting", 1]),
    );
    expect(lost.map((id) => [reader.getRun(id)?.status, launches(id)])).toEqual(
      lost.map(() => ["starting", 2]),
    );
  }, 60_000);

  it(`returns more expired starting runs than the default page (${RUN_PAGE_SIZE}) and the old cap to queued`, async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const store = openTunedStore({ stateDir: box.stateDir, synchronous: "NORMAL" });
    const stale = expiredStarting(store, flow.reserve, 10_001);
    store.close();

    host = await start(box, { workerCommand: IDLE_WORKER, now: LATER }, { synchronous: "NORMAL" });
    expect(host.reader.countRunsByStatus()).toEqual({ queued: 10_001 });
    // The oldest is the one a single read of the newest 10,000 left behind.
    expect(host.reader.getRun(stale[0] ?? "")?.status).toBe("queued");
  }, 120_000);
});
