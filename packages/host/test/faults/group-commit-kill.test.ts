import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, readState } from "./fault-fixture.js";

const NODES = 100;
const RUNS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];

/**
 * A chain of compute nodes; each appends `<name> <path>` to the ledger when it runs. A node runs only
 * after the reply to the write that opened its visit, so every ledger line names a visit the host
 * replied to as saved. The first node waits (synchronously) for the gate file, so that every run's
 * worker is ready before the traffic starts.
 */
function ledgerFlow(): string {
  const nodes = Array.from({ length: NODES }, (_, i) => `    n${i}: compute({ run: step("n${i}") }),`);
  const edges = Array.from(
    { length: NODES },
    (_, i) => `    n${i}: { to: "${i + 1 < NODES ? `n${i + 1}` : "done"}" },`,
  );
  return `import { appendFileSync, existsSync } from "node:fs";
import { compute, defineWorkflow, type NodeContext } from "piw";
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
    await waitFor("the runs to be under way", () => lines(ledger).length >= RUNS.length * 8, 60_000);
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
    expect(ran.length).toBeGreaterThanOrEqual(RUNS.length * 8);
    const byRun = new Set(ran.map(([name]) => name));
    expect(byRun.size).toBeGreaterThan(1);
    readState(box, (store) => {
      for (const [name, path] of ran) {
        const runId = runIds.get(name) as string;
        const steps = store.listRunSteps(runId);
        const index = Number(path.slice(1));
        // Its visit was opened, and the node before it finished, in what the host had committed.
        expect(
          steps.some((s) => s.path === path),
          `${name} ${path} saved`,
        ).toBe(true);
        if (index > 0) {
          expect(
            steps.find((s) => s.path === `n${index - 1}`)?.status,
            `${name} n${index - 1} finished`,
          ).toBe("succeeded");
        }
      }
    });
  }, 120_000);
});
