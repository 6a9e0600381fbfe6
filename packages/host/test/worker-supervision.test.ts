import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import {
  FLOWS,
  pidIn,
  type Sandbox,
  sandbox,
  start,
  TestClient,
  TSX_ENV,
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

async function open(workerCommand?: string[], extra: Parameters<typeof start>[1] = {}): Promise<TestClient> {
  host = await start(box, { ...(workerCommand ? { workerCommand } : {}), ...extra });
  client = await TestClient.connect(host.socketPath);
  await client.call("runs.subscribe", {});
  return client;
}

function launches(runId: string): number {
  return host?.reader.listRunEvents(runId).filter((e) => e.type === "worker.launched").length ?? -1;
}

async function reserve(c: TestClient, params: Parameters<TestClient["call"]>[1]): Promise<string> {
  const reserved = await c.call("runs.reserve", params as never);
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  return reserved.value.runId;
}

function pidsIn(file: string): number[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [];
}

const LINGER = `import { compute, defineWorkflow, shell } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "linger",
  input: z.object({ pids: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({ run: () => 1 }),
    hold: shell({ exec: ({ input }) => ["sh", "-c", 'echo $$ >> "$1"; exec sleep 600', "sh", input.pids] }),
  },
  edges: { first: { to: "hold" }, hold: { to: "done" } },
});
`;

describe("worker supervision", () => {
  it.runIf(process.platform === "linux")(
    "kills the command a killed worker left running before the relaunched visit runs it again",
    async () => {
      const hostLog: string[] = [];
      const c = await open(undefined, { log: (line) => hostLog.push(line) });
      const flow = await writeWorkflow(box, "linger", LINGER);
      const pids = join(box.dir, "pids");
      const runId = await reserve(c, flow.reserve({ pids }));
      await waitFor("the command to start", () => pidsIn(pids).length === 1, 15_000);
      const [first] = pidsIn(pids) as [number];
      expect(isAlive(first)).toBe(true);
      const worker = (await c.call("host.status", {})).workers.find((w) => w.runId === runId);
      if (!worker?.pid) throw new Error("no worker pid");
      process.kill(worker.pid, "SIGKILL");

      // The worker had saved progress, so the host relaunches it and the visit runs its command again:
      // by then the first command is gone, never running beside the second.
      await waitFor("the relaunched command to start", () => pidsIn(pids).length === 2, 15_000);
      expect(isAlive(first), hostLog.join("\n")).toBe(false);
      const second = pidsIn(pids)[1] as number;
      expect(second).not.toBe(first);
      expect(isAlive(second)).toBe(true);
      expect(launches(runId)).toBe(2);

      // A cancel stops the live worker's command too.
      expect(await c.call("runs.cancel", { runId })).toMatchObject({ kind: "applied" });
      await waitFor("the second command to stop", () => !isAlive(second), 5_000);
      expect((await c.call("runs.get", { runId }))?.status).toBe("cancelled");
    },
  );

  it("parks a worker that died without progress, launched exactly once, until an explicit resume", async () => {
    const c = await open();
    const flow = await writeWorkflow(box, "crash", FLOWS.crash);
    const runId = await reserve(c, flow.reserve({ marker: join(box.dir, "died"), at: "first" }));
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked.recoveryReason).toMatchObject({ code: "worker_lost_no_progress" });
    expect(parked.currentWork).toEqual({ kind: "none" });
    // The interrupted visit is not shown as running work.
    expect(parked.nodes.find((n) => n.path === "first")?.state).toBe("pending");
    // No retry loop: nothing relaunches it.
    await new Promise((r) => setTimeout(r, 1500));
    expect(launches(runId)).toBe(1);
    expect((await c.call("runs.get", { runId }))?.status).toBe("parked");
    expect((await c.call("host.status", {})).workers).toEqual([]);
    // An explicit resume launches it again; the marker now lets it through.
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(launches(runId)).toBe(2);
  });

  it("relaunches a worker that died after saving progress, and the run completes", async () => {
    const c = await open();
    const flow = await writeWorkflow(box, "crash", FLOWS.crash);
    const runId = await reserve(c, flow.reserve({ marker: join(box.dir, "died"), at: "second" }));
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done).toMatchObject({ outcome: "completed", recoveryReason: null });
    expect(launches(runId)).toBe(2);
    const parks = host?.reader.listRunEvents(runId).filter((e) => e.type === "run.parked") ?? [];
    expect(parks.map((e) => e.data)).toEqual([{ reason: "worker_lost" }]);
    expect(done.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["first", "succeeded", 1],
      ["second", "succeeded", 1],
    ]);
    expect(done.nodes.find((n) => n.path === "second")?.attempt).toBe(2);
  });

  it("parks (never fails) a run whose worker cannot be started at all, and relaunches only on resume", async () => {
    const c = await open([join(box.dir, "no-such-worker")]);
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const runId = await reserve(c, flow.reserve({ n: 1 }));
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked).toMatchObject({ error: null, recoveryReason: { code: "worker_lost_no_progress" } });
    await new Promise((r) => setTimeout(r, 500));
    expect(launches(runId)).toBe(1);
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    await c.view(runId, (v) => v.status === "parked" && launches(runId) === 2);
  });

  it("parks a run whose worker exits before it accepts its command, with no relaunch", async () => {
    const c = await open([process.execPath, "-e", "process.exit(3)"]);
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const runId = await reserve(c, flow.reserve({ n: 1 }));
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked.error).toBeNull();
    expect(parked.recoveryReason).toMatchObject({
      code: "worker_lost_no_progress",
      message: expect.stringContaining("before it accepted its start command"),
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(launches(runId)).toBe(1);
  });

  it("kills a worker that never accepts its command within the lease, and parks the run", async () => {
    const c = await open([process.execPath, "-e", "setInterval(() => {}, 1000)"], {
      leaseMs: 400,
      sweepIntervalMs: 100,
    });
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const runId = await reserve(c, flow.reserve({ n: 1 }));
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked).toMatchObject({ error: null, recoveryReason: { code: "worker_lost_no_progress" } });
    expect((await c.call("host.status", {})).workers).toEqual([]);
    expect(launches(runId)).toBe(1);
  });

  it("parks a resume of a run with saved visits whose worker is killed -9 while starting; one resume finishes it", async () => {
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const release = join(box.dir, "release");
    // First host: the run saves `first` and `hang`, then parks at the boundary for a pause.
    let c = await open();
    const runId = await reserve(c, flow.reserve({ release }));
    await c.view(runId, (v) => v.nodes.some((n) => n.path === "hang" && n.state === "running"));
    expect(await c.call("runs.pause", { runId })).toMatchObject({ kind: "applied" });
    writeFileSync(release, "go");
    await c.view(runId, (v) => v.status === "parked");
    c.close();
    await host?.stop();

    // Second host: its workers stand still after `worker.hello`, before accepting the command.
    const marker = join(box.dir, "hanging");
    c = await open(undefined, {
      workerEnv: { ...TSX_ENV, PIW_WORKER_HANG_AT: "starting", PIW_WORKER_HANG_MARKER: marker },
    });
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    // The marker's lines are `<pid> <boundary>`.
    const pid = await waitFor("the resumed worker to stand at starting", () => pidIn(marker), 20_000);
    expect((await c.call("runs.get", { runId }))?.status).toBe("starting");
    c.views.length = 0;
    process.kill(pid, "SIGKILL");
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked).toMatchObject({
      error: null,
      recoveryReason: {
        code: "worker_lost_no_progress",
        message: expect.stringContaining("before it accepted its resume command"),
      },
    });
    expect(parked.nodes.map((n) => [n.path, n.state])).toEqual([
      ["first", "succeeded"],
      ["hang", "succeeded"],
      ["after", "pending"],
    ]);
    // Not relaunched by itself.
    await new Promise((r) => setTimeout(r, 1000));
    expect(launches(runId)).toBe(2);
    c.close();
    await host?.stop();

    // Third host, ordinary workers: one explicit resume finishes the run from its saved visits.
    c = await open();
    c.views.length = 0;
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(done.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["first", "succeeded", 1],
      ["hang", "succeeded", 1],
      ["after", "succeeded", 1],
    ]);
    expect(launches(runId)).toBe(3);
  }, 60_000);

  it("ends a worker waiting for an agent step when its run is cancelled, without needing a kill", async () => {
    const c = await open(undefined, { cancelGraceMs: 20_000 });
    const flow = await writeWorkflow(
      box,
      "ask",
      `import { agent, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "ask",
  input: z.object({}),
  startAt: "draft",
  nodes: { draft: agent({ prompt: "Write something.", output: z.object({ text: z.string() }) }) },
  edges: { draft: { to: "done" } },
});
`,
    );
    const runId = await reserve(c, flow.reserve({}, { kind: "pi", sessionId: "s-ask" }));
    await c.call("session.settled", { sessionId: "s-ask" });
    await c.view(runId, (v) => v.nodes.some((n) => n.path === "draft" && n.state === "running"));
    const [worker] = (await c.call("host.status", {})).workers;
    expect(await c.call("runs.cancel", { runId })).toMatchObject({ kind: "applied" });
    await waitFor("the worker to exit on its own", () => (worker?.pid ? !isAlive(worker.pid) : true), 5_000);
    expect((await c.call("runs.get", { runId }))?.status).toBe("cancelled");
  });
});
