import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@piw/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { finished, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await host?.stop();
  host = undefined;
  box.cleanup();
});

// Each run holds its worker for a while, so six runs at once would need six workers.
const SLOW_FLOW = `import { action, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "slow",
  input: z.object({ ms: z.number() }),
  startAt: "hold",
  nodes: {
    hold: action({ run: async ({ input }) => { await new Promise((r) => setTimeout(r, input.ms)); return process.pid; } }),
  },
  edges: { hold: { to: "done" } },
});
`;

/** Worker processes this test's host started (from source), counted from /proc, idle or not. */
function workerProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(join("/proc", entry, "stat"), "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      if (!readFileSync(join("/proc", entry, "cmdline"), "utf8").includes("apps/worker/src/main.ts"))
        continue;
      // Only this test's host's workers: other test files may run hosts in this same process.
      const env = readFileSync(join("/proc", entry, "environ"), "utf8").split("\0");
      if (env.includes(`PIW_HOME=${box.stateDir}`)) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

async function reserveSlow(c: TestClient, count: number, ms: number): Promise<string[]> {
  const flow = await writeWorkflow(box, "slow", SLOW_FLOW);
  const runIds: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const reserved = await c.call("runs.reserve", flow.reserve({ ms }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    runIds.push(reserved.value.runId);
  }
  return runIds;
}

describe("the host's cap on concurrent workers (worker-cap rule)", () => {
  it("a host with a cap of 2 and 6 runs never has more than 2 workers at work, and all 6 finish in order", async () => {
    host = await start(box, { maxWorkers: 2 });
    client = await TestClient.connect(host.socketPath);
    const c = client;
    let most = 0;
    // Every process counts, including the one pre-started idle worker that belongs to no run.
    const sampler = setInterval(() => {
      most = Math.max(most, workerProcesses().length);
    }, 20);
    try {
      const runIds = await reserveSlow(c, 6, 1_500);
      // The runs past the cap wait in line, and say so.
      const last = runIds[5] ?? "";
      const waiting = await waitFor(
        "the last run to wait for a worker",
        async () => {
          const view = await c.call("runs.get", { runId: last });
          return view?.currentWork.kind === "waiting_for_worker" ? view : undefined;
        },
        10_000,
      );
      expect(waiting.status).toBe("queued");
      expect(waiting.currentWork).toEqual({ kind: "waiting_for_worker", position: 4, cap: 2 });
      const ended = [];
      for (const runId of runIds) ended.push(await finished(c, runId, 60_000));
      expect(ended.map((v) => v.status)).toEqual(Array(6).fill("done"));
      // First come, first served: each run was claimed no earlier than the one reserved before it.
      const reader = host.reader;
      const claims = runIds.map(
        (runId) => reader.listRunEvents(runId, 0, 100).find((e) => e.type === "run.claimed")?.at ?? 0,
      );
      expect(claims).toEqual([...claims].sort((a, b) => a - b));
      // Two at work plus the one idle spare, never more.
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      clearInterval(sampler);
    }
  }, 90_000);

  it("runs waiting in line when the host stops start after it restarts", async () => {
    host = await start(box, { maxWorkers: 1 });
    client = await TestClient.connect(host.socketPath);
    const runIds = await reserveSlow(client, 3, 400);
    const [, second, third] = runIds;
    if (second === undefined || third === undefined) throw new Error("three runs were reserved");
    const view = await client.call("runs.get", { runId: third });
    expect(view?.currentWork).toEqual({ kind: "waiting_for_worker", position: 2, cap: 1 });
    client.close();
    await host.stop();
    host = await start(box, { maxWorkers: 1 });
    client = await TestClient.connect(host.socketPath);
    for (const runId of [second, third]) {
      expect((await finished(client, runId, 60_000)).status).toBe("done");
    }
  }, 90_000);
});
