import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import {
  exited,
  type Sandbox,
  sandbox,
  spawnHostBinary,
  start,
  TestClient,
  writeWorkflow,
} from "./host-fixture.js";

// `work` reports `calls` progress updates (yielding now and then), once: a reopened attempt (after
// a crash) finds the marker and reports nothing. Then it waits for `release`; `tail` waits for `last`.
const PROGRESS_FLOW = `import { existsSync, writeFileSync } from "node:fs";
import { compute, defineWorkflow } from "piw";
import { z } from "zod";
const until = async (file: string) => {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 25));
};
export default defineWorkflow({
  name: "progress",
  input: z.object({ calls: z.number(), marker: z.string(), release: z.string(), last: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({ run: () => "saved" }),
    work: compute({
      run: async (ctx) => {
        const { calls, marker, release } = ctx.input as { calls: number; marker: string; release: string };
        if (!existsSync(marker)) {
          writeFileSync(marker, "reported");
          for (let i = 1; i <= calls; i += 1) {
            ctx.progress({ done: i, total: calls * 2, message: "item " + i });
            if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
          }
        }
        await until(release);
        return "worked";
      },
    }),
    tail: compute({ run: async (ctx) => { await until((ctx.input as { last: string }).last); return "tail"; } }),
  },
  edges: { first: { to: "work" }, work: { to: "tail" }, tail: { to: "done" } },
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

function files(calls: number) {
  return {
    calls,
    marker: join(box.dir, "marker"),
    release: join(box.dir, "release"),
    last: join(box.dir, "last"),
  };
}

function workProgress(view: RunView) {
  return view.progress?.find((p) => p.path === "work" && p.visit === 1);
}

describe("node progress through the real worker and host", () => {
  it("shows the latest of many ctx.progress calls, saved far fewer times, and drops it when the visit ends", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const flow = await writeWorkflow(box, "progress", PROGRESS_FLOW);
    const input = files(2_000);
    const began = Date.now();
    const reserved = await client.call("runs.reserve", flow.reserve(input));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    // The last update always arrives: the worker flushes what waits before the visit ends, and
    // before that the throttle sends it at most 250 ms after the previous one.
    const latest = await client.view(runId, (v) => workProgress(v)?.done === 2_000, 60_000);
    const elapsed = Date.now() - began;
    expect(workProgress(latest)).toMatchObject({
      path: "work",
      visit: 1,
      done: 2_000,
      total: 4_000,
      message: "item 2000",
    });
    const [saved] = host.reader.listNodeProgress(runId);
    expect(saved?.state).toEqual({ done: 2_000, total: 4_000, message: "item 2000" });
    // Rate-limited: one save at once, then at most one per 250 ms of the visit's reporting, plus the last.
    expect(saved?.saves).toBeGreaterThanOrEqual(2);
    expect(saved?.saves).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 250));
    expect(saved?.saves).toBeLessThan(2_000 / 10);
    // Half done from several readings: an ETA after the latest reading.
    const eta = workProgress(latest)?.eta;
    expect(eta).not.toBeNull();
    expect(eta?.at).toBeGreaterThanOrEqual(workProgress(latest)?.updatedAt ?? Number.POSITIVE_INFINITY);

    writeFileSync(input.release, "go");
    const tail = await client.view(runId, (v) =>
      v.nodes.some((n) => n.path === "tail" && n.state === "running"),
    );
    expect(tail.progress).toBeUndefined();
    expect(host.reader.listNodeProgress(runId)).toEqual([]);
    writeFileSync(input.last, "go");
    const done = await client.view(runId, (v) => v.status === "done");
    expect(done.progress).toBeUndefined();
  }, 90_000);

  it("keeps a running visit's saved progress across a kill -9 of the host", async () => {
    const binary = await spawnHostBinary(box);
    const first = await TestClient.connect(join(box.stateDir, "host.sock"));
    const flow = await writeWorkflow(box, "progress", PROGRESS_FLOW);
    const input = files(300);
    const reserved = await first.call("runs.reserve", flow.reserve(input));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await first.call("runs.subscribe", { runId });
    await first.view(runId, (v) => workProgress(v)?.done === 300, 60_000);
    const [worker] = (await first.call("host.status", {})).workers;
    first.close();
    binary.child.kill("SIGKILL");
    await exited(binary.child);
    await waitFor("the orphaned worker to exit", () => (worker?.pid ? !isAlive(worker.pid) : true), 10_000);

    // A new host: the visit is reopened as attempt 2, which reports nothing (the marker is there),
    // so what the view shows is what the killed host saved.
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    await client.call("runs.subscribe", { runId });
    const reopened = await client.view(
      runId,
      (v) => v.nodes.some((n) => n.path === "work" && n.state === "running" && n.attempt === 2),
      60_000,
    );
    expect(workProgress(reopened)).toMatchObject({ done: 300, total: 600, message: "item 300" });
    const view = await client.call("runs.get", { runId });
    expect(view && workProgress(view)).toMatchObject({ done: 300, total: 600, message: "item 300" });

    writeFileSync(input.release, "go");
    const tail = await client.view(runId, (v) =>
      v.nodes.some((n) => n.path === "tail" && n.state === "running"),
    );
    expect(tail.progress).toBeUndefined();
    writeFileSync(input.last, "go");
    await client.view(runId, (v) => v.status === "done");
  }, 120_000);

  it("fails a node whose code lets a refused update propagate, with the rule and never the value", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const flow = await writeWorkflow(
      box,
      "bad-progress",
      `import { compute, defineWorkflow, ProgressInvalid } from "piw";
export default defineWorkflow({
  name: "bad-progress",
  startAt: "caught",
  nodes: {
    caught: compute({
      run: (ctx) => {
        try {
          ctx.progress({ done: 5, total: 2 });
          return "accepted";
        } catch (error) {
          return error instanceof ProgressInvalid ? error.code : "other";
        }
      },
    }),
    thrown: compute({ run: (ctx) => { ctx.progress({ total: -7, message: "sk-live-SECRET" }); return 1; } }),
  },
  edges: { caught: { to: "thrown" }, thrown: { to: "done" } },
});
`,
    );
    const reserved = await client.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    const failed = await client.view(runId, (v) => v.status === "failed", 60_000);
    expect(failed.error).toEqual({
      code: "node_failed",
      message: "Compute node thrown failed: ctx.progress refused the update: total must not be negative.",
    });
    const history = await client.call("runs.history", { runId });
    expect(history?.steps.find((s) => s.path === "caught")?.output).toBe("progress_invalid");
    expect(JSON.stringify(history)).not.toContain("SECRET");
    expect(failed.progress).toBeUndefined();
  }, 90_000);
});
