import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { pidIn, type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, outcomeOf, readState, settledView } from "./fault-fixture.js";

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

/** One fork under the kills: a parallel node's fixed branches, or a map node's items. */
interface ForkCase {
  what: string;
  file: string;
  flow: string;
  /** The run's input; `setUp` may write the files it names. */
  input(dir: string): Record<string, string>;
  /** The paths of the two fast nodes, and of the slow one. */
  fast: [string, string];
  slow: string;
  /** After the slow node hangs: what the relaunch must not see (a map's list file rewritten). */
  afterHang?(input: Record<string, string>): void;
  output: unknown;
  /** Settled effects at the end: one per node, and a map's saved list. */
  effects: number;
  checkView?(view: RunView): void;
}

const CASES: ForkCase[] = [
  {
    what: "a parallel node",
    file: "fanout",
    flow: FANOUT_FLOW,
    input: (dir) => ({ log: join(dir, "effects.log"), pidFile: join(dir, "worker.pid") }),
    fast: ["fan/a/a", "fan/b/b"],
    slow: "fan/slow/slow",
    output: { a: "a", b: "b", slow: "slow done" },
    effects: 3,
  },
  {
    what: "a map node",
    file: "mapped",
    flow: MAP_FLOW,
    input: (dir) => {
      const listFile = join(dir, "list.txt");
      writeFileSync(listFile, "a,slow,b");
      return { log: join(dir, "effects.log"), pidFile: join(dir, "worker.pid"), listFile };
    },
    fast: ["fan/0/fan", "fan/2/fan"],
    slow: "fan/1/fan",
    // What `over` would say now: the relaunch must run the saved list, not see this.
    afterHang: (input) => writeFileSync(input.listFile as string, "x,y"),
    output: ["a", "slow done", "b"],
    effects: 4,
    // The run view lists each item's branch under the map, as the viewer and `piw status` draw it.
    checkView: (view) =>
      expect(view.manifest.forks?.[0]?.branches.map((b) => b.title)).toEqual(["fan[0]", "fan[1]", "fan[2]"]),
  },
];

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

describe.each(CASES)("kill -9 in the middle of $what", (fork) => {
  /** Starts the run and returns once the fast nodes have finished and the slow one hangs in its worker. */
  async function startAndHang(c: TestClient) {
    const flow = await writeWorkflow(box, fork.file, fork.flow);
    const input = fork.input(box.dir);
    const log = input.log as string;
    const pidFile = input.pidFile as string;
    const reserved = await c.call("runs.reserve", flow.reserve(input));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    // The fork is open, the fast nodes have finished, slow hangs after its settled effect.
    await c.view(runId, (v) => {
      const state = (path: string) => v.nodes.find((n) => n.path === path)?.state;
      return fork.fast.every((path) => state(path) === "succeeded") && state("fan") === "running";
    });
    const workerPid = await waitFor(
      "the slow node to hang",
      () => lines(log).includes("slow attempt") && pidIn(pidFile),
    );
    expect(isAlive(workerPid)).toBe(true);
    fork.afterHang?.(input);
    return { runId, log, workerPid };
  }

  /** The run completed with every node's output; the host that saw it through is then stopped. */
  async function expectCompleted(c: TestClient, runId: string): Promise<void> {
    const view = await settledView(c, runId);
    expect(view.status).toBe("done");
    expect(view.output).toEqual({ kind: "json", value: fork.output });
    fork.checkView?.(view);
    await idle(c);
    await host?.stop();
    host = undefined;
  }

  /** Each settled effect ran once; only the unfinished node ran again, in a second launch. */
  function expectOnlySlowAgain(runId: string, log: string): void {
    expect([...lines(log)].sort()).toEqual(["a", "b", "slow", "slow attempt", "slow attempt"]);
    const { outcome, steps } = readState(box, (store) => ({
      outcome: outcomeOf(store, runId, log),
      steps: store.listRunSteps(runId).map((s) => [s.path, s.visit, s.attempt, s.status]),
    }));
    expect(outcome).toMatchObject({ status: "done", launches: 2 });
    expect(outcome.effects).toEqual(Array.from({ length: fork.effects }, () => "settled"));
    expect(steps).toEqual(
      expect.arrayContaining([
        ["fan", 1, 2, "succeeded"],
        ...fork.fast.map((path) => [path, 1, 1, "succeeded"]),
        [fork.slow, 1, 2, "succeeded"],
        ["report", 1, 1, "succeeded"],
      ]),
    );
    expect(steps).toHaveLength(5);
  }

  it("of the worker: relaunched, only the unfinished node runs again, no settled effect again", async () => {
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const { runId, log, workerPid } = await startAndHang(c);
    process.kill(workerPid, "SIGKILL");
    await expectCompleted(c, runId);
    expectOnlySlowAgain(runId, log);
    expect(readState(box, (store) => outcomeOf(store, runId, log).parks)).toEqual(["worker_lost"]);
  }, 120_000);

  it("of the host: the next host relaunches it, and only the unfinished node runs again", async () => {
    host = await HostProcess.start(box);
    const first = await host.connect();
    const { runId, log, workerPid } = await startAndHang(first);
    first.close();
    await host.kill9();
    // Its channel closed with the host: the worker leaves by itself.
    await waitFor("the orphaned worker to exit", () => !isAlive(workerPid), 20_000);
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    await expectCompleted(c, runId);
    expectOnlySlowAgain(runId, log);
  }, 120_000);
});
