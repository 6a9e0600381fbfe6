import {
  type ActionContext,
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  map,
  parallel,
  shell,
  wait,
  type WorkflowDefinition,
} from "@piw/engine";
import type { AdvanceNodeVisit } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { EmbeddedActivation } from "../src/embedded-runtime.js";
import { StoreRunPort } from "../src/store-run-port.js";
import { type Harness, openRuntime } from "./harness.js";

/**
 * A pause inside a parallel or map node, against the real store: every running branch finishes the
 * visit it is in and stops at its next node boundary, no other branch starts, and the run parks once.
 */

const source = { kind: "builtin" as const, id: "parallel-drain", revision: "1" };
let h: Harness;
afterEach(() => h?.cleanup());

/** A promise the test resolves, and how many times the work waiting on it ran. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open: () => open() };
}

/** Calls `then` once a branch's advance was held by the pause (its next start refused, nothing parked). */
function onHeld(activation: EmbeddedActivation, then: () => void): void {
  const port = activation.port;
  const advance = port.advanceNodeVisit.bind(port);
  port.advanceNodeVisit = async (req: AdvanceNodeVisit) => {
    const t = await advance(req);
    if ((t.kind === "applied" || t.kind === "adopted") && t.value.started.kind === "recoveryRequired") {
      setImmediate(then);
    }
    return t;
  };
}

/** An action that counts its runs, performs one effect, and may first wait for a gate. */
function counted(runs: Map<string, number>, name: string, before?: () => Promise<void>) {
  return action({
    run: async ({ effects }: ActionContext) => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      if (before) await before();
      return effects.idempotent("note", { name }, () => name);
    },
  });
}

function chain(name: string, nodes: Record<string, ReturnType<typeof action>>): WorkflowDefinition {
  const names = Object.keys(nodes);
  return defineWorkflow({
    name,
    startAt: names[0] as string,
    nodes,
    edges: Object.fromEntries(names.map((n, i) => [n, { to: names[i + 1] ?? "done" }])),
  } as never) as WorkflowDefinition;
}

function fanned(fan: unknown): ReturnType<typeof compileWorkflow> {
  return compileWorkflow(
    defineWorkflow({
      name: "drain",
      startAt: "fan",
      nodes: { fan, after: compute({ run: ({ outputs }) => outputs.fan }) },
      edges: { fan: { to: "after" }, after: { to: "done" } },
    } as never) as WorkflowDefinition,
  );
}

function parkEvents(runId: string): number {
  return h.store.listRunEvents(runId).filter((e) => e.type === "run.parked").length;
}

function pause(runId: string): void {
  expect(h.store.requestPause({ runId }).kind).toBe("applied");
}

/** Every effect of the run settled, each exactly once. */
function effectsSettledOnce(runId: string, runs: Map<string, number>): void {
  const effects = h.store.listRunEffects(runId);
  expect(effects.every((e) => e.status === "settled")).toBe(true);
  for (const [name, n] of runs) expect(n, name).toBe(1);
}

describe("a pause inside a parallel node drains its branches", () => {
  it("lets a branch mid-visit finish and save it, holds the branch at its boundary, parks once, and resumes without re-running", async () => {
    h = openRuntime();
    const runs = new Map<string, number>();
    const slow = gate();
    let runId = "";
    const wf = fanned(
      parallel({
        branches: {
          a: chain("a", { a1: counted(runs, "a1", () => slow.opened), a2: counted(runs, "a2") }),
          b: chain("b", {
            b1: counted(runs, "b1", async () => pause(runId)),
            b2: counted(runs, "b2"),
          }),
        },
        join: "all",
      }),
    );
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    // Branch a is still inside a1 when b's boundary is held by the pause.
    onHeld(first, slow.open);
    expect(await h.runtime.execute(first, wf)).toEqual({ kind: "parked", reason: "paused" });
    const steps = new Map(h.store.listRunSteps(runId).map((s) => [s.path, s]));
    expect(steps.get("fan/a/a1")?.status).toBe("succeeded");
    expect(steps.get("fan/b/b1")?.status).toBe("succeeded");
    // a1's boundary came after the pause too: neither branch opened its next visit.
    expect(steps.has("fan/a/a2")).toBe(false);
    expect(steps.has("fan/b/b2")).toBe(false);
    expect(h.store.getRun(runId)).toMatchObject({ status: "parked", paused: true });
    expect(h.store.listRunEffects(runId).map((e) => [e.path, e.status])).toEqual([
      ["fan/b/b1", "settled"],
      ["fan/a/a1", "settled"],
    ]);
    expect(parkEvents(runId)).toBe(1);

    const resumed = h.runtime.activate(runId, { resume: true });
    expect(await h.runtime.execute(resumed, wf)).toEqual({
      kind: "completed",
      output: { a: "a2", b: "b2" },
    });
    effectsSettledOnce(runId, runs);
    // Only the parallel node's own visit reopened; no branch visit ran a second attempt.
    const branchSteps = h.store.listRunSteps(runId).filter((s) => s.path !== "fan");
    expect(branchSteps.every((s) => s.attempt === 1)).toBe(true);
  });

  it("a cancel during a draining pause stops the running branch at once", async () => {
    h = openRuntime();
    const controller = new AbortController();
    let runId = "";
    const wf = fanned(
      parallel({
        branches: {
          a: shell({ exec: ["sleep", "30"] }),
          b: chain("b", {
            b1: action({ run: () => pause(runId) }),
            b2: action({ run: () => "b2" }),
          }),
        },
        join: "all",
      }),
    );
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    onHeld(first, () => {
      expect(h.store.cancelRun({ runId }).kind).toBe("applied");
      controller.abort();
    });
    // Without the cancel winning, the sleep would hold the run for 30 s (past the test's timeout).
    const outcome = await h.runtime.execute(first, wf, controller.signal);
    expect(outcome.kind).not.toBe("parked");
    expect(h.store.getRun(runId)?.status).toBe("cancelled");
    const a = h.store.listRunSteps(runId).find((s) => s.path === "fan/a/a");
    expect(a?.status).not.toBe("succeeded");
  }, 10_000);

  it("drains a parallel node nested in a branch: the run parks once every branch of both forks rests", async () => {
    h = openRuntime();
    const runs = new Map<string, number>();
    const inner = gate();
    const outer = gate();
    let runId = "";
    const wf = fanned(
      parallel({
        branches: {
          a: parallel({
            branches: {
              x: chain("x", { x1: counted(runs, "x1", () => inner.opened), x2: counted(runs, "x2") }),
              y: chain("y", {
                y1: counted(runs, "y1", async () => pause(runId)),
                y2: counted(runs, "y2"),
              }),
            },
            join: "all",
          }),
          b: chain("b", { b1: counted(runs, "b1", () => outer.opened), b2: counted(runs, "b2") }),
        },
        join: "all",
      }),
    );
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    onHeld(first, () => {
      inner.open();
      outer.open();
    });
    expect(await h.runtime.execute(first, wf)).toEqual({ kind: "parked", reason: "paused" });
    const status = new Map(h.store.listRunSteps(runId).map((s) => [s.path, s.status]));
    expect(status.get("fan/a/a/x/x1")).toBe("succeeded");
    expect(status.get("fan/a/a/y/y1")).toBe("succeeded");
    expect(status.get("fan/b/b1")).toBe("succeeded");
    for (const never of ["fan/a/a/x/x2", "fan/a/a/y/y2", "fan/b/b2"]) expect(status.has(never)).toBe(false);
    expect(parkEvents(runId)).toBe(1);

    const resumed = h.runtime.activate(runId, { resume: true });
    expect(await h.runtime.execute(resumed, wf)).toMatchObject({ kind: "completed" });
    effectsSettledOnce(runId, runs);
    expect(runs.get("x2")).toBe(1);
  });

  it("a map with concurrency 2 of 4 items paused mid-way starts no new item", async () => {
    h = openRuntime();
    const runs = new Map<string, number>();
    const second = gate();
    let runId = "";
    const item = defineWorkflow({
      name: "item",
      startAt: "one",
      nodes: {
        one: action({
          run: async ({ input, effects }: ActionContext<number>) => {
            runs.set(`one${input}`, (runs.get(`one${input}`) ?? 0) + 1);
            if (input === 0) pause(runId);
            if (input === 1) await second.opened;
            return effects.idempotent("note", { input }, () => input);
          },
        }),
        two: action({
          run: ({ input }: ActionContext<number>) => {
            runs.set(`two${input}`, (runs.get(`two${input}`) ?? 0) + 1);
            return input * 10;
          },
        }),
      },
      edges: { one: { to: "two" }, two: { to: "done" } },
    } as never) as WorkflowDefinition;
    const wf = fanned(map({ over: () => [0, 1, 2, 3], branch: item, join: "all", concurrency: 2 }));
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    onHeld(first, second.open);
    expect(await h.runtime.execute(first, wf)).toEqual({ kind: "parked", reason: "paused" });
    const paths = h.store.listRunSteps(runId).map((s) => s.path);
    expect(paths.filter((p) => p.startsWith("fan/2/") || p.startsWith("fan/3/"))).toEqual([]);
    expect(h.store.listRunSteps(runId).find((s) => s.path === "fan/1/one")?.status).toBe("succeeded");
    expect(parkEvents(runId)).toBe(1);

    const resumed = h.runtime.activate(runId, { resume: true });
    expect(await h.runtime.execute(resumed, wf)).toEqual({ kind: "completed", output: [0, 10, 20, 30] });
    effectsSettledOnce(runId, runs);
  });

  it("a worker lost during a draining pause: the relaunch honours the pause and re-runs only the unfinished visit", async () => {
    h = openRuntime();
    const runs = new Map<string, number>();
    let runId = "";
    let hang = true;
    const wf = fanned(
      parallel({
        branches: {
          a: chain("a", {
            a1: counted(runs, "a1", () => (hang ? new Promise<never>(() => {}) : Promise.resolve())),
          }),
          b: chain("b", { b1: counted(runs, "b1", async () => pause(runId)), b2: counted(runs, "b2") }),
        },
        join: "all",
      }),
    );
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    let held = false;
    onHeld(first, () => {
      held = true;
    });
    // The worker dies while a1 runs and b rests at its boundary: nothing parked the run yet.
    void h.runtime.execute(first, wf);
    while (!held) await new Promise((r) => setTimeout(r, 5));
    expect(h.store.getRun(runId)).toMatchObject({ status: "running", paused: true });
    expect(
      h.store.parkRun(first.port.fence, { code: "worker_lost", message: "killed", launchId: "l1" }).kind,
    ).toBe("applied");
    hang = false;
    // The host relaunches it: the pause still holds, so the new worker parks it without running anything.
    const relaunch = h.runtime.activate(runId);
    expect(await h.runtime.execute(relaunch, wf)).toEqual({ kind: "parked", reason: "paused" });
    expect(runs).toEqual(
      new Map([
        ["a1", 1],
        ["b1", 1],
      ]),
    );
    expect(h.store.listRunSteps(runId).find((s) => s.path === "fan/b/b2")).toBeUndefined();

    const resumed = h.runtime.activate(runId, { resume: true });
    expect(await h.runtime.execute(resumed, wf)).toMatchObject({ kind: "completed" });
    // a1 had not finished: it ran again (its effect once); b1 had: it did not.
    expect(runs).toEqual(
      new Map([
        ["a1", 2],
        ["b1", 1],
        ["b2", 1],
      ]),
    );
    expect(h.store.listRunEffects(runId).every((e) => e.status === "settled")).toBe(true);
  });
});

describe("a retry in a branch waits for its due time", () => {
  it("when the run wakes for another branch's wait, a retry not yet due parks again for its saved time", async () => {
    h = openRuntime();
    let attempts = 0;
    const wf = fanned(
      parallel({
        branches: {
          a: wait({ ms: 50 }),
          b: action({
            retry: { attempts: 2, backoff: { initialMs: 600_000 } },
            run: () => {
              attempts += 1;
              if (attempts === 1) throw new Error("first attempt fails");
              return "second";
            },
          }),
        },
        join: "all",
      }),
    );
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    expect(await h.runtime.execute(h.runtime.activate(runId), wf)).toEqual({
      kind: "parked",
      reason: "waiting",
    });
    expect(h.store.getRun(runId)).toMatchObject({ recoveryReason: { code: "waiting", path: "fan/a/a" } });
    // The clock wakes the run for a's wait (due within the wake lead).
    const woken = h.store.claimRun({ runId, claimToken: "wake", leaseMs: 30_000, wake: true });
    expect(woken.kind).toBe("applied");
    if (woken.kind !== "applied") return;
    const { command } = woken.value;
    const port = new StoreRunPort(h.store, { runId, generation: command.generation, claimToken: "wake" });
    const outcome = await h.runtime.execute({ command, port }, wf);
    expect(outcome).toEqual({ kind: "parked", reason: "retry_waiting" });
    // b's second attempt did not run: the run waits for the time its first failure saved.
    expect(attempts).toBe(1);
    const run = h.store.getRun(runId);
    expect(run).toMatchObject({ recoveryReason: { code: "retry_waiting", path: "fan/b/b", attempt: 2 } });
    const reason = run?.status === "parked" ? run.recoveryReason : null;
    if (reason?.code !== "retry_waiting") throw new Error("the run is not waiting for b's retry");
    const { at } = reason;
    const b = h.store.listRunSteps(runId).find((s) => s.path === "fan/b/b");
    expect(b?.status).toBe("running");
    // Every attempt of b's visit opened before its saved due time, and none ran its work since.
    expect(b?.startedAt).toBeLessThan(at);
    expect(h.store.listRunSteps(runId).find((s) => s.path === "fan/a/a")?.status).toBe("succeeded");
  });
});
