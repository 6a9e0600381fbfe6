import { writeFileSync } from "node:fs";
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

// One long step and no agent turn at all: only the host's clock can see the time budget pass.
const LONG_FLOW = `import { existsSync } from "node:fs";
import { action, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "long",
  input: z.object({ quick: z.string() }),
  startAt: "work",
  nodes: {
    work: action({
      run: async ({ input }) => {
        if (!existsSync(input.quick)) await new Promise((r) => setTimeout(r, 30_000));
        return "worked";
      },
    }),
  },
  edges: { work: { to: "done" } },
});
`;

describe("a run's wall budget while a step runs", () => {
  it("parks a run whose step outlives its wallMs with budget_exceeded, and a resume with a raised budget finishes", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const c = client;
    const quick = join(box.dir, "quick");
    const flow = await writeWorkflow(box, "long", LONG_FLOW);
    // The client sends the workflow's budget with the run, as piw run does.
    const reserved = await c.call("runs.reserve", { ...flow.reserve({ quick }), budget: { wallMs: 1500 } });
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    // Well before the step's own 30 s are over.
    const parked = await waitFor(
      "the run to park at its wall budget",
      async () => {
        const view = await c.call("runs.get", { runId });
        return view?.status === "parked" ? view : undefined;
      },
      20_000,
    );
    expect(parked.recoveryReason).toMatchObject({ code: "budget_exceeded", limit: "wallMs", path: "work" });
    expect(parked.spend?.wallMs ?? 0).toBeGreaterThanOrEqual(1500);
    // Its worker was told to stop: nothing runs the step any more.
    await waitFor(
      "the run's worker to exit",
      async () => (await c.call("host.status", {})).workers.every((w) => w.runId !== runId),
      10_000,
    );
    writeFileSync(quick, "");
    const resumed = await c.call("runs.resume", { runId, budget: { wallMs: 600_000 } });
    expect(resumed.kind).toBe("applied");
    const done = await finished(c, runId, 30_000);
    expect(done.status).toBe("done");
  }, 60_000);
});
