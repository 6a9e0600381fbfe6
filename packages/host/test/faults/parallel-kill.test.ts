import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, sandbox, type TestClient, until, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, isRunning, lines, outcomeOf, readState, settledView } from "./fault-fixture.js";

/**
 * Three branches, each with one idempotent effect that appends its name to the log. `a` and `b` end at
 * once; `slow` notes each attempt, and on its first it writes its worker's pid and hangs, so the test
 * can kill that worker with `kill -9` while the others have finished and the fork is still open.
 */
const FANOUT_FLOW = `import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { type ActionContext, action, compute, defineWorkflow, parallel } from "piw";
import { z } from "zod";

type Input = { log: string; pidFile: string };

const noted = (name: string) =>
  action({
    run: ({ input, effects }: ActionContext<Input>) =>
      effects.idempotent("note", { name }, () => {
        appendFileSync(input.log, name + "\\n");
        return name;
      }),
  });

export default defineWorkflow({
  name: "fanout",
  input: z.object({ log: z.string(), pidFile: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        a: noted("a"),
        b: noted("b"),
        slow: action({
          run: async ({ input, effects }: ActionContext<Input>) => {
            await effects.idempotent("note", { name: "slow" }, () => {
              appendFileSync(input.log, "slow\\n");
              return "slow";
            });
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

/** Starts the run and returns once a and b have finished and slow hangs in its worker. */
async function startAndHang(c: TestClient) {
  const flow = await writeWorkflow(box, "fanout", FANOUT_FLOW);
  const log = join(box.dir, "effects.log");
  const pidFile = join(box.dir, "worker.pid");
  const reserved = await c.call("runs.reserve", flow.reserve({ log, pidFile }));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const { runId } = reserved.value;
  // The fork is open, a and b have finished, slow hangs after its settled effect.
  await c.view(runId, (v) => {
    const state = (path: string) => v.nodes.find((n) => n.path === path)?.state;
    return state("fan/a/a") === "succeeded" && state("fan/b/b") === "succeeded" && state("fan") === "running";
  });
  await until("the slow branch to hang", () => existsSync(pidFile) && lines(log).includes("slow attempt"));
  const workerPid = Number(readFileSync(pidFile, "utf8"));
  expect(isRunning(workerPid)).toBe(true);
  return { runId, log, workerPid };
}

/** The run completed with every branch's output; the host that saw it through is then stopped. */
async function expectCompleted(c: TestClient, runId: string): Promise<void> {
  const view = await settledView(c, runId);
  expect(view.status).toBe("done");
  expect(view.output).toEqual({ kind: "json", value: { a: "a", b: "b", slow: "slow done" } });
  await idle(c);
  await host?.stop();
  host = undefined;
}

/** Each settled effect ran once; only the unfinished branch's node ran again, in a second launch. */
function expectOnlySlowAgain(runId: string, log: string): void {
  expect([...lines(log)].sort()).toEqual(["a", "b", "slow", "slow attempt", "slow attempt"]);
  const { outcome, steps } = readState(box, (store) => ({
    outcome: outcomeOf(store, runId, log),
    steps: store.listRunSteps(runId).map((s) => [s.path, s.visit, s.attempt, s.status]),
  }));
  expect(outcome).toMatchObject({ status: "done", launches: 2 });
  expect(outcome.effects).toEqual(["settled", "settled", "settled"]);
  expect(steps).toEqual(
    expect.arrayContaining([
      ["fan", 1, 2, "succeeded"],
      ["fan/a/a", 1, 1, "succeeded"],
      ["fan/b/b", 1, 1, "succeeded"],
      ["fan/slow/slow", 1, 2, "succeeded"],
      ["report", 1, 1, "succeeded"],
    ]),
  );
  expect(steps).toHaveLength(5);
}

describe("kill -9 in the middle of a parallel node", () => {
  it("of the worker: relaunched, only the unfinished branch runs again, no settled effect again", async () => {
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const { runId, log, workerPid } = await startAndHang(c);
    process.kill(workerPid, "SIGKILL");
    await expectCompleted(c, runId);
    expectOnlySlowAgain(runId, log);
    expect(readState(box, (store) => outcomeOf(store, runId, log).parks)).toEqual(["worker_lost"]);
  }, 120_000);

  it("of the host: the next host relaunches it, and only the unfinished branch runs again", async () => {
    host = await HostProcess.start(box);
    const first = await host.connect();
    const { runId, log, workerPid } = await startAndHang(first);
    first.close();
    await host.kill9();
    // Its channel closed with the host: the worker leaves by itself.
    await until("the orphaned worker to exit", () => !isRunning(workerPid), 20_000);
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    await expectCompleted(c, runId);
    expectOnlySlowAgain(runId, log);
  }, 120_000);
});
