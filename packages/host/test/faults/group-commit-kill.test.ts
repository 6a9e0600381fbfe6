import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, readState } from "./fault-fixture.js";

const NODES = 100;
const RUNS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];

/** Every LEDGER_EVERY-th node is an action that writes the ledger; the ones between are pure computes. */
const LEDGER_EVERY = 4;

/**
 * A chain of pure compute nodes, the worker pipelines them, with an action every LEDGER_EVERY nodes
 * that appends `<name> <path>` to the ledger when it runs. An action runs only after the reply to
 * the write that opened its visit and to every write before it (the burst's barrier), so every ledger
 * line names a visit the host replied to as saved, and all the pure visits before it. The first node
 * waits (synchronously) for the gate file, so that every run's worker is ready before the traffic starts.
 */
function ledgerFlow(): string {
  const nodes = Array.from({ length: NODES }, (_, i) =>
    i % LEDGER_EVERY === 0
      ? `    n${i}: action({ run: step("n${i}") }),`
      : `    n${i}: compute({ run: ({ node }) => node.path }),`,
  );
  const edges = Array.from(
    { length: NODES },
    (_, i) => `    n${i}: { to: "${i + 1 < NODES ? `n${i + 1}` : "done"}" },`,
  );
  return `import { appendFileSync, existsSync } from "node:fs";
import { action, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { name: string; ledger: string; gate: string };
const pause = new Int32Array(new SharedArrayBuffer(4));
const step = (path: string) => ({ input }: NodeContext<Input>) => {
  if (path === "n0") {
    appendFileSync(input.gate + ".ready", input.name + "\\n");
    const deadline = Date.now() + 60_000;
    while (!existsSync(input.gate) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  }
  appendFileSync(input.ledger, input.name + " " + path + "\\n");
  return path;
};

export default defineWorkflow({
  name: "ledger",
  input: z.object({ name: z.string(), ledger: z.string(), gate: z.string() }),
  startAt: "n0",
  maxSteps: ${NODES + 10},
  nodes: {
${nodes.join("\n")}
  },
  edges: {
${edges.join("\n")}
  },
});
`;
}

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

describe("kill -9 of the host while concurrent runs' writes are group-committed", () => {
  it("loses nothing that a worker was told is saved", async () => {
    // Every run's worker at the gate at once, whatever the machine's default worker cap.
    host = await HostProcess.start(box, { PIW_MAX_WORKERS: String(RUNS.length) });
    client = await host.connect();
    const ledger = join(box.dir, "ledger.log");
    const gate = join(box.dir, "gate");
    const flow = await writeWorkflow(box, "ledger", ledgerFlow());
    const runIds = new Map<string, string>();
    for (const name of RUNS) {
      const reserved = await client.call("runs.reserve", flow.reserve({ name, ledger, gate }));
      if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
      runIds.set(name, reserved.value.runId);
    }
    await waitFor(
      "every run's worker to wait at the gate",
      () => lines(`${gate}.ready`).length === RUNS.length,
      60_000,
    );
    writeFileSync(gate, "");
    // Mid-traffic: the runs have moved on, none has finished.
    await waitFor("the runs to be under way", () => lines(ledger).length >= RUNS.length * 3, 60_000);
    const pids = await client.call("host.status").then((s) => s.workers.map((w) => w.pid));
    client.close();
    client = undefined;
    await host.kill9();
    host = undefined;
    await waitFor(
      "the orphaned workers to exit",
      () => pids.every((pid) => pid === null || !isAlive(pid)),
      15_000,
    );

    const ran = lines(ledger).map((line) => line.split(" ") as [string, string]);
    expect(ran.length).toBeGreaterThanOrEqual(RUNS.length * 3);
    const byRun = new Set(ran.map(([name]) => name));
    expect(byRun.size).toBeGreaterThan(1);
    readState(box, (store) => {
      for (const [name, path] of ran) {
        const runId = runIds.get(name) as string;
        const steps = store.listRunSteps(runId);
        const index = Number(path.slice(1));
        // Its visit was opened, and every node before it (pipelined or not) finished, in what the
        // host had committed.
        expect(
          steps.some((s) => s.path === path),
          `${name} ${path} saved`,
        ).toBe(true);
        for (let before = 0; before < index; before += 1) {
          expect(steps.find((s) => s.path === `n${before}`)?.status, `${name} n${before} finished`).toBe(
            "succeeded",
          );
        }
      }
    });
  }, 120_000);
});
