import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import {
  exited,
  FLOWS,
  type Sandbox,
  sandbox,
  spawnHostBinary,
  start,
  TestClient,
  writeWorkflow,
} from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.stop();
  host = undefined;
  box.cleanup();
});

const STALL = `import { existsSync } from "node:fs";
import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "stall",
  input: z.object({ release: z.string() }),
  startAt: "wait",
  nodes: {
    wait: compute({
      run: async ({ input }) => {
        while (!existsSync((input as { release: string }).release)) await new Promise((r) => setTimeout(r, 25));
        return "released";
      },
    }),
  },
  edges: { wait: { to: "done" } },
});
`;

function launches(runId: string): number {
  return host?.reader.listRunEvents(runId).filter((e) => e.type === "worker.launched").length ?? -1;
}

/** Start a run on a host binary, wait until `node` runs, then kill -9 the host; its worker follows. */
async function runThenKillHost(
  flowName: string,
  body: string,
  node: string,
  input: Record<string, string>,
): Promise<string> {
  const binary = await spawnHostBinary(box);
  const c = await TestClient.connect(join(box.stateDir, "host.sock"));
  const flow = await writeWorkflow(box, flowName, body);
  const reserved = await c.call("runs.reserve", flow.reserve(input));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const { runId } = reserved.value;
  await c.call("runs.subscribe", { runId });
  await c.view(runId, (v) => v.nodes.some((n) => n.path === node && n.state === "running"));
  const [worker] = (await c.call("host.status", {})).workers;
  c.close();
  binary.child.kill("SIGKILL");
  await exited(binary.child);
  // The worker's channel closed with its host: it exits on its own.
  await waitFor("the orphaned worker to exit", () => (worker?.pid ? !isAlive(worker.pid) : true), 10_000);
  return runId;
}

describe("host restart reconciliation", () => {
  it("relaunches a run whose worker saved progress before the host was killed", async () => {
    const release = join(box.dir, "release");
    const runId = await runThenKillHost("hang", FLOWS.hang, "hang", { release });
    // The stale lock and socket of the killed host are taken over.
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    await client.call("runs.subscribe", { runId });
    await client.view(
      runId,
      (v) =>
        v.currentWork.kind === "worker" && v.nodes.some((n) => n.path === "hang" && n.state === "running"),
    );
    writeFileSync(release, "go");
    const done = await client.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(launches(runId)).toBe(2);
    expect(host.reader.readRunFinalOutput(runId)).toBe("released");
  }, 60_000);

  it("parks a run that made no progress since launch, and does not relaunch it", async () => {
    const release = join(box.dir, "release");
    const runId = await runThenKillHost("stall", STALL, "wait", { release });
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const view = await client.call("runs.get", { runId });
    expect(view).toMatchObject({ status: "parked", recoveryReason: { code: "worker_lost_no_progress" } });
    expect(view?.currentWork).toEqual({ kind: "none" });
    await new Promise((r) => setTimeout(r, 500));
    expect(launches(runId)).toBe(1);
    expect((await client.call("host.status", {})).workers).toEqual([]);
  }, 60_000);

  it("returns an expired starting claim with no worker to queued and activates the CLI run", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    // What a host killed between claim and launch leaves: a starting run with a lease and no launch.
    const store = RunStore.open({ stateDir: box.stateDir });
    const runId = "count-stale-1";
    store.reservePreparedRun({ ...flow.reserve({ n: 4 }), runId });
    expect(store.claimRun({ runId, claimToken: "old-token", leaseMs: 1000 }).kind).toBe("applied");
    store.close();
    host = await start(box, { now: () => Date.now() + 60_000 });
    client = await TestClient.connect(host.socketPath);
    await client.call("runs.subscribe", { runId });
    const done = await client.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(host.reader.readRunFinalOutput(runId)).toBe(10);
    expect(host.reader.listRunEvents(runId).some((e) => e.type === "run.lease_expired")).toBe(true);
  }, 60_000);

  it("parks (never requeues or fails) a resume with saved visits whose worker died with its host while starting", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    // What a host killed during a resume leaves: `one` saved, a resume claimed and launched, never accepted.
    const store = RunStore.open({ stateDir: box.stateDir });
    const runId = "count-resume-1";
    store.reservePreparedRun({ ...flow.reserve({ n: 4 }), runId });
    const first = { runId, generation: 1, claimToken: "tok-1" };
    expect(store.claimRun({ runId, claimToken: "tok-1", leaseMs: 1000 }).kind).toBe("applied");
    store.recordWorkerLaunch(first, { launchId: "launch-1", commandType: "start", pid: null });
    store.markRunning(first);
    store.startNodeVisit(first, { path: "one", visit: 1, nodeKind: "compute" });
    store.finishNodeVisit(first, {
      path: "one",
      visit: 1,
      result: { status: "succeeded", output: 5, next: "two" },
    });
    store.parkRun(first, { code: "paused", message: "Paused by request." });
    store.recordWorkerExit({ launchId: "launch-1", exit: { kind: "reported", phase: "execute" } });
    const resumed = store.claimRun({ runId, claimToken: "tok-2", leaseMs: 60_000 });
    if (resumed.kind !== "applied") throw new Error(JSON.stringify(resumed));
    expect(resumed.value.command.type).toBe("resume");
    const fence = { runId, generation: resumed.value.command.generation, claimToken: "tok-2" };
    store.recordWorkerLaunch(fence, { launchId: "launch-2", commandType: "resume", pid: null });
    store.close();

    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const parked = await client.call("runs.get", { runId });
    expect(parked).toMatchObject({
      status: "parked",
      error: null,
      recoveryReason: { code: "worker_lost_no_progress", launchId: "launch-2" },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(launches(runId)).toBe(2);
    await client.call("runs.subscribe", { runId });
    expect(await client.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    const done = await client.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(host.reader.readRunFinalOutput(runId)).toBe(10);
    // `one` ran once, before the host died; the resume went on from it.
    expect(done.nodes.map((n) => [n.path, n.visits, n.attempt])).toEqual([
      ["one", 1, 1],
      ["two", 1, 1],
    ]);
  }, 60_000);

  it("leaves a Pi run that returned to queued waiting for its session", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const store = RunStore.open({ stateDir: box.stateDir });
    const runId = "count-stale-2";
    store.reservePreparedRun({ ...flow.reserve({ n: 4 }, { kind: "pi", sessionId: "s-1" }), runId });
    store.claimRun({ runId, claimToken: "old-token", leaseMs: 1000 });
    store.close();
    host = await start(box, { now: () => Date.now() + 60_000 });
    client = await TestClient.connect(host.socketPath);
    expect((await client.call("runs.get", { runId }))?.status).toBe("queued");
    expect(await client.call("session.settled", { sessionId: "s-1" })).toEqual({ activated: [runId] });
  }, 60_000);

  it("creates the terminal messages a finished Pi run never got", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const store = RunStore.open({ stateDir: box.stateDir });
    const runId = "count-done-1";
    store.reservePreparedRun({ ...flow.reserve({ n: 1 }, { kind: "pi", sessionId: "s-2" }), runId });
    const claimed = store.claimRun({ runId, claimToken: "t", leaseMs: 10_000 });
    if (claimed.kind !== "applied") throw new Error("claim");
    const fence = { runId, generation: claimed.value.command.generation, claimToken: "t" };
    store.markRunning(fence);
    store.finishRun(fence, { outcome: "completed", output: 4 });
    expect(store.getRun(runId)).toHaveProperty("presentationState", "pending");
    store.close();
    host = await start(box);
    expect(host.reader.getRun(runId)).toHaveProperty("presentationState", "created");
    expect(host.reader.listRunEvents(runId).filter((e) => e.type === "run.presented")).toHaveLength(1);
  }, 60_000);

  it("stops gracefully: workers' channels close, they exit, and the next host resumes the run", async () => {
    const release = join(box.dir, "release");
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const reserved = await client.call("runs.reserve", flow.reserve({ release }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    await client.view(runId, (v) => v.nodes.some((n) => n.path === "hang" && n.state === "running"));
    const [worker] = (await client.call("host.status", {})).workers;
    // A client asks the host to stop: it replies first, then stops.
    await expect(client.call("host.stop", {})).resolves.toEqual({ stopping: true });
    await host.stopped;
    expect(worker?.pid && isAlive(worker.pid)).toBe(false);
    client.close();
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    await client.call("runs.subscribe", { runId });
    await client.view(runId, (v) => v.currentWork.kind === "worker");
    writeFileSync(release, "go");
    await client.view(runId, (v) => v.status === "done");
    expect(launches(runId)).toBe(2);
  }, 60_000);
});
