import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { foldJson } from "../src/run-history.js";
import { FLOWS, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

const BIG = `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "big",
  startAt: "make",
  nodes: {
    make: compute({ run: () => ({ text: "x".repeat(300_000), list: Array.from({ length: 5000 }, (_, i) => i) }) }),
    boom: compute({ run: () => { throw new Error("no luck"); } }),
  },
  edges: { make: { to: "boom" }, boom: { to: "done" } },
});
`;

/** Two branches side by side: one done at once, one that waits for a file that never comes. */
const FORK = `import { existsSync } from "node:fs";
import { compute, defineWorkflow, parallel } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "fork",
  input: z.object({ release: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        quick: compute({ run: () => 1 }),
        slow: compute({
          run: async ({ input }) => {
            const { release } = input as { release: string };
            while (!existsSync(release)) await new Promise((r) => setTimeout(r, 25));
            return 2;
          },
        }),
      },
      join: "all",
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

let box: Sandbox;
let host: RunningHost;
let client: TestClient;
beforeEach(async () => {
  box = sandbox();
  host = await start(box);
  client = await TestClient.connect(host.socketPath);
});
afterEach(async () => {
  client.close();
  await host.stop();
  box.cleanup();
});

describe("runs.history", () => {
  it("returns the trace, folded outputs and errors of a finished run", async () => {
    const flow = await writeWorkflow(box, "big", BIG);
    const reserved = await client.call("runs.reserve", flow.reserve({}));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    await client.view(runId, (view) => view.status === "failed");
    const history = await client.call("runs.history", { runId });
    if (history === null) throw new Error("no history");
    expect(history.runId).toBe(runId);
    expect(history.eventsOmitted).toBe(0);
    const types = history.events.map((event) => event.type);
    expect(types[0]).toBe("run.queued");
    expect(types).toContain("node.started");
    expect(types).toContain("node.succeeded");
    expect(types).toContain("node.failed");
    expect(history.events.map((event) => event.seq)).toEqual(
      [...history.events.map((e) => e.seq)].sort((a, b) => a - b),
    );
    const make = history.steps.find((step) => step.path === "make");
    const output = make?.output as { text: string; list: unknown[] };
    // Folded, not dropped: the shape stays and the fold says how much is missing.
    expect(output.text.length).toBeLessThan(300_000);
    expect(output.text).toMatch(/… \(\d+ more characters\)$/);
    expect(JSON.stringify(make?.output).length).toBeLessThan(600_000);
    const boom = history.steps.find((step) => step.path === "boom");
    expect(boom).toMatchObject({ status: "failed", errorCode: expect.any(String) });
    expect(boom?.error).toBe("Compute node boom threw an Error.");
  });

  it.each([
    ["a single-path run", "hang", FLOWS.hang, "hang", { first: "succeeded", hang: "cancelled" }],
    [
      "a parallel run",
      "fork",
      FORK,
      "fan/slow/slow",
      { fan: "cancelled", "fan/quick/quick": "succeeded", "fan/slow/slow": "cancelled" },
    ],
  ])(
    "shows the visits open at a cancel of %s as cancelled, as the view does",
    async (_what, name, body, open, expected) => {
      const flow = await writeWorkflow(box, name, body);
      const reserved = await client.call("runs.reserve", flow.reserve({ release: `${box.dir}/never` }));
      if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
      const { runId } = reserved.value;
      await client.call("runs.subscribe", { runId });
      // The cancel lands while `open` runs and after every node expected to succeed has: a parallel
      // run's quick branch may still be finishing when the slow one shows as running.
      const settled = Object.entries(expected).filter(([, state]) => state === "succeeded");
      await client.view(
        runId,
        (v) =>
          v.nodes.some((n) => n.path === open && n.state === "running") &&
          settled.every(([path]) => v.nodes.some((n) => n.path === path && n.state === "succeeded")),
      );
      expect(await client.call("runs.cancel", { runId })).toMatchObject({ kind: "applied" });
      const view = await client.view(runId, (v) => v.status === "cancelled" && v.currentWork.kind === "none");
      const history = await client.call("runs.history", { runId });
      const steps = Object.fromEntries((history?.steps ?? []).map((s) => [s.path, s.status]));
      expect(steps).toEqual(expected);
      // The view says the same of every node the history lists.
      const states = Object.fromEntries(
        view.nodes.filter((n) => n.path in steps).map((n) => [n.path, n.state]),
      );
      expect(states).toEqual(expected);
    },
  );

  it("answers null for an unknown run", async () => {
    expect(await client.call("runs.history", { runId: "nope-1" })).toBeNull();
  });
});

describe("foldJson", () => {
  it("keeps small values whole and folds long strings, arrays and objects", () => {
    expect(foldJson({ a: [1, "two", null] }, 1_000)).toEqual({ a: [1, "two", null] });
    expect(foldJson("y".repeat(100), 20)).toBe(`${"y".repeat(20)}… (80 more characters)`);
    expect(
      foldJson(
        Array.from({ length: 100 }, (_, i) => i),
        40,
      ),
    ).toEqual([0, 1, 2, 3, 4, "… 95 more items"]);
    const keys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const folded = foldJson(keys, 30) as Record<string, unknown>;
    expect(folded["…"]).toMatch(/^\d+ more keys$/);
    expect(Object.keys(folded).length).toBeLessThan(10);
  });
});
