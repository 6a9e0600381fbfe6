import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, sandbox, type TestClient, until, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, isRunning, lines, outcomeOf, readState, settledView } from "./fault-fixture.js";

/**
 * A map over the names in a list file, each item one idempotent effect that appends its name to the
 * log. `slow` notes each attempt, and on its first it writes its worker's pid and hangs, so the test
 * can kill that worker with `kill -9` while the other items have finished and the map is still open.
 * `over` reads the file on purpose: the test rewrites it, and the relaunch must run the saved list.
 */
const MAP_FLOW = `import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { type ActionContext, action, compute, defineWorkflow, map } from "piw";
import { z } from "zod";

type Input = { log: string; pidFile: string; listFile: string };

export default defineWorkflow({
  name: "mapped",
  input: z.object({ log: z.string(), pidFile: z.string(), listFile: z.string() }),
  startAt: "fan",
  nodes: {
    fan: map({
      over: ({ input }: { input: Input }) => readFileSync(input.listFile, "utf8").split(",").map((name) => ({ name, ...input })),
      branch: action({
        run: async ({ input, effects }: ActionContext<Input & { name: string }>) => {
          await effects.idempotent("note", { name: input.name }, () => {
            appendFileSync(input.log, input.name + "\\n");
            return input.name;
          });
          if (input.name !== "slow") return input.name;
          appendFileSync(input.log, "slow attempt\\n");
          if (!existsSync(input.pidFile)) {
            writeFileSync(input.pidFile, String(process.pid));
            await new Promise(() => {});
          }
          return "slow done";
        },
      }),
      concurrency: 3,
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

/** Starts the run over `a,slow,b` and returns once a and b have finished and slow hangs in its worker. */
async function startAndHang(c: TestClient) {
  const flow = await writeWorkflow(box, "mapped", MAP_FLOW);
  const log = join(box.dir, "effects.log");
  const pidFile = join(box.dir, "worker.pid");
  const listFile = join(box.dir, "list.txt");
  writeFileSync(listFile, "a,slow,b");
  const reserved = await c.call("runs.reserve", flow.reserve({ log, pidFile, listFile }));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const { runId } = reserved.value;
  await c.view(runId, (v) => {
    const state = (path: string) => v.nodes.find((n) => n.path === path)?.state;
    return (
      state("fan/0/fan") === "succeeded" && state("fan/2/fan") === "succeeded" && state("fan") === "running"
    );
  });
  await until("the slow item to hang", () => existsSync(pidFile) && lines(log).includes("slow attempt"));
  const workerPid = Number(readFileSync(pidFile, "utf8"));
  expect(isRunning(workerPid)).toBe(true);
  // What `over` would say now: the relaunch must not see it.
  writeFileSync(listFile, "x,y");
  return { runId, log, workerPid };
}

/** The run completed over the saved list; the host that saw it through is then stopped. */
async function expectCompleted(c: TestClient, runId: string): Promise<void> {
  const view = await settledView(c, runId);
  expect(view.status).toBe("done");
  expect(view.output).toEqual({ kind: "json", value: ["a", "slow done", "b"] });
  // The run view lists each item's branch under the map, as the viewer and `piw status` draw it.
  expect(view.manifest.forks?.[0]?.branches.map((b) => b.title)).toEqual(["fan[0]", "fan[1]", "fan[2]"]);
  await idle(c);
  await host?.stop();
  host = undefined;
}

/** Each settled effect ran once; only the unfinished item's node ran again, in a second launch. */
function expectOnlySlowAgain(runId: string, log: string): void {
  expect([...lines(log)].sort()).toEqual(["a", "b", "slow", "slow attempt", "slow attempt"]);
  const { outcome, steps } = readState(box, (store) => ({
    outcome: outcomeOf(store, runId, log),
    steps: store.listRunSteps(runId).map((s) => [s.path, s.visit, s.attempt, s.status]),
  }));
  expect(outcome).toMatchObject({ status: "done", launches: 2 });
  // The saved list and one note per item, each settled once.
  expect(outcome.effects).toEqual(["settled", "settled", "settled", "settled"]);
  expect(steps).toEqual(
    expect.arrayContaining([
      ["fan", 1, 2, "succeeded"],
      ["fan/0/fan", 1, 1, "succeeded"],
      ["fan/1/fan", 1, 2, "succeeded"],
      ["fan/2/fan", 1, 1, "succeeded"],
      ["report", 1, 1, "succeeded"],
    ]),
  );
  expect(steps).toHaveLength(5);
}

describe("kill -9 in the middle of a map node", () => {
  it("of the worker: relaunched over the saved list, only the unfinished item runs again, no settled effect again", async () => {
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const { runId, log, workerPid } = await startAndHang(c);
    process.kill(workerPid, "SIGKILL");
    await expectCompleted(c, runId);
    expectOnlySlowAgain(runId, log);
    expect(readState(box, (store) => outcomeOf(store, runId, log).parks)).toEqual(["worker_lost"]);
  }, 120_000);

  it("of the host: the next host relaunches it over the saved list, and only the unfinished item runs again", async () => {
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
