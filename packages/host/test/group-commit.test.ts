import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

/**
 * `first` tells the test it stands at the gate, waits (in the worker, synchronously) until the gate
 * opens, says it left, and returns the run's name; `second` returns what `first` gave, suffixed.
 */
const GATED_FLOW = `import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { name: string; gate: string };
const pause = new Int32Array(new SharedArrayBuffer(4));

export default defineWorkflow({
  name: "gated",
  input: z.object({ name: z.string(), gate: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({
      run: ({ input }: NodeContext<Input>) => {
        writeFileSync(join(input.gate, input.name + ".at-gate"), "");
        const deadline = Date.now() + 60_000;
        while (!existsSync(join(input.gate, "open")) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
        writeFileSync(join(input.gate, input.name + ".left"), "");
        return input.name;
      },
    }),
    second: compute({ run: ({ outputs }) => String(outputs.first) + "-second" }),
  },
  edges: { first: { to: "second" }, second: { to: "done" } },
});
`;

const NAMES = ["north", "south", "east", "west"];

/** Hold this thread (the in-process host's too) until `ready`, then `extraMs` more. */
function holdThread(ready: () => boolean, extraMs: number): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 30_000;
  while (!ready() && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  Atomics.wait(pause, 0, 0, extraMs);
}

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

describe("group commit across real workers", () => {
  it("commits the writes of several runs' workers that arrive together in one commit, each with its own result; a refused one changes nothing", async () => {
    const groups: number[] = [];
    host = await start(box, { onGroupCommit: (requests) => groups.push(requests) });
    client = await TestClient.connect(host.socketPath);
    const gate = join(box.dir, "gate");
    mkdirSync(gate);
    const flow = await writeWorkflow(box, "gated", GATED_FLOW);
    const runIds: string[] = [];
    for (const name of NAMES) {
      const reserved = await client.call("runs.reserve", flow.reserve({ name, gate }));
      if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
      runIds.push(reserved.value.runId);
    }
    await waitFor(
      "every worker to stand at the gate",
      () => NAMES.every((name) => existsSync(join(gate, `${name}.at-gate`))),
      60_000,
    );
    // West is cancelled while its worker waits at the gate: its next write will carry a fence the
    // cancel released, in the same group as the others' writes.
    const west = runIds[3] as string;
    expect((await client.call("runs.cancel", { runId: west })).kind).toBe("applied");
    // Every run's `first` is open and saved; its worker waits at the gate. The host (this thread) is
    // held while the gate opens, so the four workers' next writes (finish `first`, start `second`)
    // all wait in their pipes and reach the host in one turn of its event loop.
    const before = groups.length;
    writeFileSync(join(gate, "open"), "");
    holdThread(() => NAMES.every((name) => existsSync(join(gate, `${name}.left`))), 500);
    const reader = host.reader;
    await waitFor(
      "every run to finish",
      () => runIds.slice(0, 3).every((runId) => reader.getRun(runId)?.status === "done"),
      60_000,
    );
    expect(groups[before]).toBe(NAMES.length);
    // The refused write saved nothing: west's first visit is as the cancel left it, no second visit.
    expect(reader.getRun(west)?.status).toBe("cancelled");
    expect(reader.listRunSteps(west).map((s) => s.path)).toEqual(["first"]);
    NAMES.slice(0, 3).forEach((name, i) => {
      const runId = runIds[i] as string;
      expect(reader.getRun(runId)).toHaveProperty("outcome", "completed");
      expect(reader.readRunFinalOutput(runId)).toEqual(`${name}-second`);
      expect(reader.listRunSteps(runId).map((s) => `${s.path}:${s.status}`)).toEqual([
        "first:succeeded",
        "second:succeeded",
      ]);
    });
  }, 120_000);
});
