import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

const TIMEOUT_MS = 4_000;

/** A compute (progress), then a 1 s command under a 4 s deadline that writes its pid when it starts. */
const NAP = `import { compute, defineWorkflow, shell } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "nap",
  input: z.object({ pids: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({ run: () => 1 }),
    nap: shell({
      timeoutMs: ${TIMEOUT_MS},
      exec: ({ input }) => ["sh", "-c", 'echo $$ >> "$1"; sleep 1', "sh", input.pids],
    }),
  },
  edges: { first: { to: "nap" }, nap: { to: "done" } },
});
`;

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

function starts(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

async function killRunWorker(c: TestClient, runId: string): Promise<void> {
  const worker = (await c.call("host.status", {})).workers.find((w) => w.runId === runId);
  if (!worker?.pid) throw new Error("no worker pid");
  process.kill(worker.pid, "SIGKILL");
}

describe("a node deadline across a parked run", () => {
  it("counts only the time workers ran the visit: a run parked past the deadline finishes after one resume", async () => {
    host = await start(box);
    const c = await TestClient.connect(host.socketPath);
    client = c;
    await c.call("runs.subscribe", {});
    const flow = await writeWorkflow(box, "nap", NAP);
    const pids = join(box.dir, "pids");
    const reserved = await c.call("runs.reserve", flow.reserve({ pids }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;

    // Killed once after `first` was saved: the host relaunches it, and the visit of `nap` reopens.
    await waitFor("the command to start", () => starts(pids) === 1, 20_000);
    await killRunWorker(c, runId);
    // Killed again: that launch saved nothing, so the run parks until someone resumes it.
    await waitFor("the relaunched command to start", () => starts(pids) === 2, 20_000);
    await killRunWorker(c, runId);
    await c.view(runId, (v) => v.status === "parked" && v.recoveryReason?.code === "worker_lost_no_progress");

    // Parked for longer than the whole deadline, then resumed once.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 500));
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    const ended = await c.view(runId, (v) => v.status === "done" || v.status === "failed", 20_000);
    expect(ended).toMatchObject({ status: "done", outcome: "completed", error: null });
    expect(starts(pids)).toBe(3);
    const nap = host.reader.listRunSteps(runId).find((s) => s.path === "nap");
    expect(nap).toMatchObject({ status: "succeeded", attempt: 3, timeoutMs: TIMEOUT_MS });
  }, 60_000);
});
