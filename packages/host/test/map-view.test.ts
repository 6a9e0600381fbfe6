import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

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

/**
 * A map over five items, one at a time: item 0's branch waits for the gate file, so items 1 to 4
 * stay queued behind it until the test opens the gate.
 */
const GATED_FLOW = `import { existsSync } from "node:fs";
import { type ActionContext, action, defineWorkflow, map } from "piw";
import { z } from "zod";

type Item = { at: number; gate: string };

export default defineWorkflow({
  name: "gated",
  input: z.object({ gate: z.string() }),
  startAt: "fan",
  nodes: {
    fan: map({
      over: ({ input }: { input: { gate: string } }) => [0, 1, 2, 3, 4].map((at) => ({ at, gate: input.gate })),
      branch: action({
        run: async ({ input }: ActionContext<Item>) => {
          while (input.at === 0 && !existsSync(input.gate)) await new Promise((r) => setTimeout(r, 20));
          return input.at;
        },
      }),
      concurrency: 1,
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

/** The list is saved, but its items do not fit the branch's input: the map fails before any branch. */
const MISFIT_FLOW = `import { compute, defineWorkflow, map } from "piw";
import { z } from "zod";

const measure = defineWorkflow({
  name: "measure",
  input: z.string(),
  startAt: "letters",
  nodes: { letters: compute({ run: ({ input }) => input.length }) },
  edges: { letters: { to: "done" } },
});

export default defineWorkflow({
  name: "misfit",
  startAt: "fan",
  nodes: { fan: map({ over: () => [1, 2, 3], branch: measure }) },
  edges: { fan: { to: "done" } },
});
`;

async function reserve(name: string, source: string, input: Record<string, string>) {
  host = await start(box);
  const c = await TestClient.connect(host.socketPath);
  client = c;
  await c.call("runs.subscribe", {});
  const flow = await writeWorkflow(box, name, source);
  const reserved = await c.call("runs.reserve", flow.reserve(input));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  return { c, runId: reserved.value.runId };
}

const stateOf = (view: RunView, path: string) => view.nodes.find((n) => n.path === path)?.state;
const titles = (view: RunView) => view.manifest.forks?.[0]?.branches.map((b) => b.title);
const settled = (v: RunView) =>
  ["done", "failed", "cancelled"].includes(v.status) && v.currentWork.kind === "none";

describe("a map node's items in the run view", () => {
  it("lists every item's branch from the moment the list is saved, the queued ones pending", async () => {
    const gate = join(box.dir, "gate");
    const { c, runId } = await reserve("gated", GATED_FLOW, { gate });
    const blocked = await c.view(runId, (v) => stateOf(v, "fan/0/fan") === "running", 60_000);
    expect(titles(blocked)).toEqual(["fan[0]", "fan[1]", "fan[2]", "fan[3]", "fan[4]"]);
    for (const i of [1, 2, 3, 4]) {
      expect(blocked.nodes.find((n) => n.path === `fan/${i}/fan`)).toMatchObject({
        state: "pending",
        visits: 0,
      });
    }
    expect(blocked.nodes.some((n) => n.path.includes("each"))).toBe(false);
    // A view asked for, not pushed, is the same view.
    const got = await c.call("runs.get", { runId });
    expect(got && titles(got)).toEqual(titles(blocked));

    writeFileSync(gate, "open");
    const done = await c.view(runId, settled, 60_000);
    expect(done.status).toBe("done");
    expect(done.output).toEqual({ kind: "json", value: [0, 1, 2, 3, 4] });
    expect(titles(done)).toEqual(titles(blocked));
    expect([0, 1, 2, 3, 4].map((i) => stateOf(done, `fan/${i}/fan`))).toEqual(Array(5).fill("succeeded"));
  }, 120_000);

  it("lists no item of a list its branch refused: the map keeps its template branch", async () => {
    const { c, runId } = await reserve("misfit", MISFIT_FLOW, {});
    const view = await c.view(runId, settled, 60_000);
    expect(view.error?.code).toBe("map_item_invalid");
    const effects = host?.reader.listRunEffects(runId).map((e) => [e.path, e.effectType, e.status]);
    expect(effects).toEqual([["fan", "map.items", "settled"]]);
    expect(view.manifest.forks?.[0]?.branches.map((b) => b.name)).toEqual(["each"]);
    expect(view.nodes.map((n) => n.path)).toEqual(["fan", "fan/each/letters"]);
  }, 120_000);
});
