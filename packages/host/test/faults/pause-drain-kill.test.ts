import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { pidIn, type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, outcomeOf, readState } from "./fault-fixture.js";

/**
 * Two branches. `a` is two nodes: `a1` waits for a go file, then notes itself in an idempotent
 * effect; `a2` notes itself. `slow` notes each attempt, and on its first writes its worker's pid and
 * hangs. The test pauses the run while slow hangs, lets a1 finish (a then rests at its boundary, the
 * run still running while slow's visit is open), and kills that worker with `kill -9`.
 */
const DRAIN_FLOW = `import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { type ActionContext, action, compute, defineWorkflow, parallel } from "piw";
import { z } from "zod";

type Input = { log: string; pidFile: string; goFile: string };

const noted = (name: string, before: (input: Input) => Promise<void> = async () => {}) =>
  action({
    run: async ({ input, effects }: ActionContext<Input>) => {
      await before(input);
      return effects.idempotent("note", { name }, () => {
        appendFileSync(input.log, name + "\\n");
        return name;
      });
    },
  });

const go = async (input: Input) => {
  while (!existsSync(input.goFile)) await new Promise((r) => setTimeout(r, 20));
};

export default defineWorkflow({
  name: "drain",
  input: z.object({ log: z.string(), pidFile: z.string(), goFile: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        a: defineWorkflow({
          name: "a",
          input: z.object({ log: z.string(), pidFile: z.string(), goFile: z.string() }),
          startAt: "a1",
          nodes: { a1: noted("a1", go), a2: noted("a2") },
          edges: { a1: { to: "a2" }, a2: { to: "done" } },
        }),
        slow: action({
          run: async ({ input }: ActionContext<Input>) => {
            appendFileSync(input.log, "slow attempt\\n");
            if (!existsSync(input.pidFile)) {
              writeFileSync(input.pidFile, String(process.pid));
              await new Promise(() => {});
            }
            return "slow done";
          },
        }),
      },
      join: "all",
    }),
    report: compute({ run: ({ outputs }) => outputs.fan }),
  },
  edges: { fan: { to: "report" }, report: { to: "done" } },
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

describe("kill -9 while a pause drains a parallel node", () => {
  it("recovers honouring the pause: parked, nothing more run; the resume re-runs only the unfinished visit", async () => {
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const flow = await writeWorkflow(box, "drain", DRAIN_FLOW);
    const log = join(box.dir, "effects.log");
    const pidFile = join(box.dir, "worker.pid");
    const goFile = join(box.dir, "go");
    const reserved = await c.call("runs.reserve", flow.reserve({ log, pidFile, goFile }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    const workerPid = await waitFor(
      "the slow branch to hang",
      () => lines(log).includes("slow attempt") && pidIn(pidFile),
    );
    expect((await c.call("runs.pause", { runId })).kind).toBe("applied");
    writeFileSync(goFile, "");
    // a1 finished and was saved; the run still runs, draining: slow's visit is open.
    const draining = await c.view(
      runId,
      (v) => v.nodes.find((n) => n.path === "fan/a/a1")?.state === "succeeded",
    );
    expect(draining.status).toBe("running");
    expect(readState(box, (store) => store.getRun(runId)?.paused)).toBe(true);
    process.kill(workerPid, "SIGKILL");

    // The relaunch finds the pause still asked for: it parks without running a2 or slow again.
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked.status).toBe("parked");
    await idle(c);
    expect(readState(box, (store) => store.getRun(runId))).toHaveProperty("recoveryReason.code", "paused");
    expect(lines(log)).toEqual(["slow attempt", "a1"]);

    expect((await c.call("runs.resume", { runId })).kind).toBe("applied");
    // Waited for by its end: a view pushed before the resume still shows the run parked.
    const view = await c.view(runId, (v) => v.status === "done" || v.status === "failed", 45_000);
    expect(view.status).toBe("done");
    expect(view.output).toEqual({ kind: "json", value: { a: "a2", slow: "slow done" } });
    await idle(c);
    await host.stop();
    host = undefined;
    // a1's settled effect never ran again; slow's unfinished visit ran once more, after the resume.
    expect([...lines(log)].sort()).toEqual(["a1", "a2", "slow attempt", "slow attempt"]);
    const { outcome, steps } = readState(box, (store) => ({
      outcome: outcomeOf(store, runId, log),
      steps: store.listRunSteps(runId).map((s) => [s.path, s.attempt, s.status]),
    }));
    expect(outcome.parks).toEqual(["worker_lost", "paused"]);
    expect(outcome.effects).toEqual(["settled", "settled"]);
    expect(steps).toEqual(
      expect.arrayContaining([
        ["fan/a/a1", 1, "succeeded"],
        ["fan/a/a2", 1, "succeeded"],
        ["fan/slow/slow", 2, "succeeded"],
      ]),
    );
    expect(isAlive(workerPid)).toBe(false);
  }, 120_000);
});
