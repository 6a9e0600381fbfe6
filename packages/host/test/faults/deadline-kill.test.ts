import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lines, waitFor } from "@piw/test-kit";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, readState, settledView } from "./fault-fixture.js";

const TIMEOUT_MS = 3_000;

/**
 * A step that makes progress, then an action that works for a second, is killed at its first effect
 * and waits forever after.
 */
const DEADLINE_FLOW = `import { action, compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "deadline",
  startAt: "prepare",
  nodes: {
    prepare: compute({ run: () => 1 }),
    slow: action({
      timeoutMs: ${TIMEOUT_MS},
      run: async ({ effects }) => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await effects.idempotent("mark", {}, () => true);
        await new Promise((resolve) => setTimeout(resolve, 120_000));
        return "never";
      },
    }),
  },
  edges: { prepare: { to: "slow" }, slow: { to: "done" } },
});
`;

/** A compute (progress), then a 1 s command under a 4 s deadline that writes its pid when it starts. */
const NAP_FLOW = `import { compute, defineWorkflow, shell } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "nap",
  input: z.object({ pids: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({ run: () => 1 }),
    nap: shell({ timeoutMs: 4_000, exec: ({ input }) => ["sh", "-c", 'echo $$ >> "$1"; sleep 1', "sh", input.pids] }),
  },
  edges: { first: { to: "nap" }, nap: { to: "done" } },
});
`;

let box: Sandbox;
let host: HostProcess | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.kill9();
  host = undefined;
  box.cleanup();
});

describe("a node deadline across a killed worker", () => {
  it("keeps the deadline saved when the visit first opened, moved on only while the run stood parked, and times out at it", async () => {
    host = await HostProcess.start(box, {
      PIW_WORKER_CRASH_AT: "before-effect-reserve",
      PIW_WORKER_CRASH_ONCE_FILE: join(box.dir, "crashed-once"),
    });
    const c = await host.connect();
    client = c;
    const flow = await writeWorkflow(box, "deadline", DEADLINE_FLOW);
    const reserved = await c.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    const view = await settledView(c, runId);
    await idle(c);
    expect(host.log()).toContain("PIW_WORKER_CRASH_AT=before-effect-reserve: killing myself");
    expect(view).toMatchObject({ status: "failed", outcome: "timed_out", error: { code: "node_timed_out" } });
    c.close();
    client = undefined;
    await host.stop();
    host = undefined;

    const { step, started, parked, retried } = readState(box, (store) => {
      const events = store.listRunEvents(runId);
      return {
        step: store.listRunSteps(runId).find((s) => s.path === "slow"),
        started: events.find((e) => e.type === "node.started" && e.path === "slow"),
        parked: events.find((e) => e.type === "run.parked"),
        retried: events.find((e) => e.type === "node.retried" && e.path === "slow"),
      };
    });
    // The second worker reopened the visit (attempt 2) later than the first opened it...
    expect(step).toMatchObject({ status: "timed_out", attempt: 2, timeoutMs: TIMEOUT_MS });
    expect(started).toBeDefined();
    expect(parked).toMatchObject({ data: { reason: "worker_lost" } });
    expect(retried).toBeDefined();
    const startedAt = (started as { at: number }).at;
    const parkedAt = (parked as { at: number }).at;
    const retriedAt = (retried as { at: number }).at;
    // (A relaunch takes another worker process, warm or new: more than the 2 ms the event and row
    // times may differ, though a warm worker can take over in tens of milliseconds.)
    expect(retriedAt - startedAt).toBeGreaterThan(10);
    // ...and the deadline is still the first one, moved on only by the time no worker ran the visit
    // (from the lost worker's park to the reopen), not the relaunch + a fresh timeout.
    const deadlineAt = step?.deadlineAt ?? 0;
    // (Each event time may trail its row's time by what its transaction took: a few milliseconds, more
    // on a busy machine. A fresh deadline would be off by the second the first worker ran the visit.)
    const expected = startedAt + TIMEOUT_MS + (retriedAt - parkedAt);
    const times = JSON.stringify({ startedAt, parkedAt, retriedAt, deadlineAt });
    expect(Math.abs(deadlineAt - expected), times).toBeLessThanOrEqual(30);
    expect(deadlineAt, times).toBeLessThan(retriedAt + TIMEOUT_MS - 500);
  }, 120_000);

  it("does not count the time no host ran: a visit whose host died finishes after a restart past its deadline", async () => {
    host = await HostProcess.start(box);
    let c = await host.connect();
    client = c;
    const flow = await writeWorkflow(box, "nap", NAP_FLOW);
    const pids = join(box.dir, "pids");
    const reserved = await c.call("runs.reserve", flow.reserve({ pids }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await waitFor("the command to start", () => lines(pids).length === 1, 20_000);
    c.close();
    client = undefined;
    await host.kill9();
    // No host for longer than the whole deadline; its workers exit once their channel is gone.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    host = await HostProcess.start(box);
    c = await host.connect();
    client = c;
    // `first` was saved since the lost launch, so the new host relaunches the run by itself.
    const view = await settledView(c, runId);
    expect(view).toMatchObject({ status: "done", outcome: "completed", error: null });
    expect(lines(pids)).toHaveLength(2);
  }, 120_000);
});
