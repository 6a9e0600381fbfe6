import { type AdvanceNodeVisit, advanceNodeVisitSchema, type Fence } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  flatRun,
  crashAndRelaunch,
  expectRefusedBySchema,
  openHarness,
  runningRun,
  runSnapshot,
  type StoreHarness,
  saved,
  unchanged,
} from "./fixtures.js";

const RUN = "advance-1";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function open(store: StoreHarness["store"], fence: Fence, path: string, visit = 1) {
  return saved(store.startNodeVisit(fence, { path, visit, nodeKind: "compute" }));
}

/** plan (visit 1) succeeded with `output` and moves on to build (visit 1). */
function planToBuild(output: unknown = { plan: "x" }): AdvanceNodeVisit {
  return {
    finish: {
      path: "plan",
      visit: 1,
      result: { status: "succeeded", output: output as never, next: "build" },
    },
    start: { path: "build", visit: 1, nodeKind: "shell" },
  };
}

/** Everything the store says about the run, for comparing two stores that took the same clock. */
function everything(store: StoreHarness["store"]) {
  return {
    run: store.getRun(RUN),
    steps: store.listRunSteps(RUN),
    events: store.listRunEvents(RUN),
    snapshot: store.readRunSnapshot(RUN),
  };
}

describe("advanceNodeVisit", () => {
  it("saves exactly what finishNodeVisit then startNodeVisit save", () => {
    const twin = openHarness();
    try {
      const req = planToBuild();
      const fence = runningRun(h.store, RUN);
      const twinFence = runningRun(twin.store, RUN);
      open(h.store, fence, "plan");
      open(twin.store, twinFence, "plan");
      h.clock.now += 1_000;
      twin.clock.now += 1_000;

      const advanced = h.store.advanceNodeVisit(fence, req);
      const finished = saved(twin.store.finishNodeVisit(twinFence, req.finish));
      const started = twin.store.startNodeVisit(twinFence, req.start);

      expect(advanced).toEqual({ kind: "applied", value: { finished, started } });
      expect(started).toEqual({
        kind: "applied",
        value: { status: "running", path: "build", visit: 1, attempt: 1 },
      });
      expect(everything(h.store)).toEqual(everything(twin.store));
      expect(
        h.store
          .listRunEvents(RUN)
          .slice(-2)
          .map((e) => e.type),
      ).toEqual(["node.succeeded", "node.started"]);
    } finally {
      twin.cleanup();
    }
  });

  // The finish's run change waits to share one UPDATE with the start's: every way the start goes must
  // still save what the two calls save one after the other.
  const boundaries: Array<[string, (store: StoreHarness["store"], fence: Fence) => AdvanceNodeVisit]> = [
    [
      "a pause parks the run at the boundary",
      (store) => {
        saved(store.requestPause({ runId: RUN }));
        return planToBuild();
      },
    ],
    [
      "the next visit is open already (a crash retry)",
      (store, fence) => {
        open(store, fence, "build");
        return planToBuild();
      },
    ],
    [
      "the next visit has finished already",
      (store, fence) => {
        open(store, fence, "build");
        saved(
          store.finishNodeVisit(fence, {
            path: "build",
            visit: 1,
            result: { status: "succeeded", output: null, next: "ship" },
          }),
        );
        return planToBuild();
      },
    ],
    [
      "the start names the wrong visit number",
      () => ({ ...planToBuild(), start: { path: "build", visit: 3, nodeKind: "shell" } }),
    ],
  ];
  it.each(boundaries)("saves what finish then start save when %s", (_, setUp) => {
    const twin = openHarness();
    try {
      const fence = runningRun(h.store, RUN);
      const twinFence = runningRun(twin.store, RUN);
      open(h.store, fence, "plan");
      open(twin.store, twinFence, "plan");
      const req = setUp(h.store, fence);
      setUp(twin.store, twinFence);
      h.clock.now += 1_000;
      twin.clock.now += 1_000;

      const advanced = h.store.advanceNodeVisit(fence, req);
      const finished = saved(twin.store.finishNodeVisit(twinFence, req.finish));
      const started = twin.store.startNodeVisit(twinFence, req.start);

      expect(advanced).toEqual({ kind: "applied", value: { finished, started } });
      expect(everything(h.store)).toEqual(everything(twin.store));
    } finally {
      twin.cleanup();
    }
  });

  it("counts visits like a start: a loop back to the same node opens its next visit", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "loop");
    const again = h.store.advanceNodeVisit(fence, {
      finish: { path: "loop", visit: 1, result: { status: "succeeded", output: 1, next: "loop" } },
      start: { path: "loop", visit: 2, nodeKind: "compute" },
    });
    expect(saved(again).started).toEqual({
      kind: "applied",
      value: { status: "running", path: "loop", visit: 2, attempt: 1 },
    });
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.visit, s.status])).toEqual([
      ["loop", 1, "succeeded"],
      ["loop", 2, "running"],
    ]);
  });

  it("adopts a finish saved already; the start then treats the open next visit as startNodeVisit does", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "plan");
    const first = saved(h.store.advanceNodeVisit(fence, planToBuild()));
    const before = runSnapshot(h.store, RUN);

    // Sent again (a relaunched worker never does; a start of an open visit is a crash retry).
    expect(h.store.advanceNodeVisit(fence, planToBuild())).toEqual({
      kind: "adopted",
      value: {
        finished: first.finished,
        started: { kind: "applied", value: { status: "running", path: "build", visit: 1, attempt: 2 } },
      },
    });
    expect(runSnapshot(h.store, RUN).revision).toBe(before.revision + 1);
    expect(h.store.listRunEvents(RUN).at(-1)).toMatchObject({ type: "node.retried", path: "build" });
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.status, s.attempt])).toEqual(
      expect.arrayContaining([
        ["plan", "succeeded", 1],
        ["build", "running", 2],
      ]),
    );
  });

  it("refuses a different result for a finished visit and saves nothing, not even the start", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "plan");
    saved(h.store.finishNodeVisit(fence, planToBuild().finish));

    const refused = unchanged(h.store, [RUN], () =>
      h.store.advanceNodeVisit(fence, planToBuild({ plan: "other" })),
    );
    expect(refused).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "step",
        id: `${RUN}:plan:1`,
        expected: "running",
        actual: "succeeded",
      },
    });
    expect(h.store.listRunSteps(RUN).map((s) => s.path)).toEqual(["plan"]);
  });

  it("refuses a visit that is not open, and a stale fence, saving nothing", () => {
    const old = runningRun(h.store, RUN);
    expect(unchanged(h.store, [RUN], () => h.store.advanceNodeVisit(old, planToBuild()))).toEqual({
      kind: "conflict",
      evidence: { kind: "visit_not_open", runId: RUN, path: "plan", visit: 1 },
    });

    open(h.store, old, "plan");
    const current = crashAndRelaunch(h.store, old, "claim-2");
    const refused = unchanged(h.store, [RUN], () => h.store.advanceNodeVisit(old, planToBuild()));
    expect(refused).toMatchObject({
      kind: "conflict",
      evidence: { kind: "stale_fence", expectedGeneration: old.generation },
    });
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.status])).toEqual([["plan", "running"]]);
    // The new claim can still finish and move on.
    open(h.store, current, "plan");
    expect(h.store.advanceNodeVisit(current, planToBuild()).kind).toBe("applied");
  });

  it("checks a fence's expected revision once, before the finish", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "plan");
    const { revision } = runSnapshot(h.store, RUN);

    expect(
      unchanged(h.store, [RUN], () =>
        h.store.advanceNodeVisit({ ...fence, expectedRevision: revision - 1 }, planToBuild()),
      ),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "revision_mismatch", runId: RUN, expected: revision - 1, actual: revision },
    });
    const advanced = saved(h.store.advanceNodeVisit({ ...fence, expectedRevision: revision }, planToBuild()));
    expect(advanced.started.kind).toBe("applied");
  });

  it("saves the finish and parks the run when a pause waits at that boundary", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "plan");
    saved(h.store.requestPause({ runId: RUN }));

    const advanced = saved(h.store.advanceNodeVisit(fence, planToBuild()));
    expect(advanced.finished).toMatchObject({ status: "finished", path: "plan", visit: 1 });
    expect(advanced.started).toEqual({
      kind: "recoveryRequired",
      reason: { code: "paused", message: "Paused at a node boundary by request." },
    });
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({ status: "parked", paused: true, claimed: false });
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.status])).toEqual([["plan", "succeeded"]]);
  });

  it("saves a routed failure with its route and report in the same commit as the next start", () => {
    const fence = runningRun(h.store, RUN);
    open(h.store, fence, "plan");
    const report = { exitCode: 1, stdout: "1 failing", stderr: "AssertionError" };
    const routed: AdvanceNodeVisit = {
      finish: {
        path: "plan",
        visit: 1,
        result: {
          status: "failed",
          error: { code: "node_failed", message: "exit 1" },
          next: "fix",
          output: report,
        },
      },
      start: { path: "fix", visit: 1, nodeKind: "compute" },
    };
    const revision = h.store.getRun(RUN)?.revision ?? 0;
    const advanced = saved(h.store.advanceNodeVisit(fence, routed));
    expect(advanced.finished).toMatchObject({ result: routed.finish.result });
    expect(h.store.getRun(RUN)?.revision).toBe(revision + 2);
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.status, s.nextPath])).toEqual([
      ["plan", "failed", "fix"],
      ["fix", "running", null],
    ]);
    expect(h.store.readRunSnapshot(RUN).visits[0]).toMatchObject({
      status: "failed",
      output: report,
      nextPath: "fix",
    });
    // The same routed finish again adopts; another report for the same visit is refused.
    expect(h.store.finishNodeVisit(fence, routed.finish).kind).toBe("adopted");
    const other = {
      ...routed.finish,
      result: { ...routed.finish.result, output: { ...report, exitCode: 2 } },
    };
    expect(h.store.finishNodeVisit(fence, other as never).kind).toBe("conflict");
  });

  it.each([
    [
      "an unrouted failed result",
      { status: "failed", error: { code: "node_failed", message: "x" } },
      "build",
    ],
    [
      "a failure routed elsewhere",
      { status: "failed", error: { code: "node_failed", message: "x" }, next: "fix" },
      "build",
    ],
    ["a succeeded result at an exit", { status: "succeeded", output: 1, next: null }, "build"],
    ["a start that is not the result's next node", { status: "succeeded", output: 1, next: "test" }, "build"],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, result, startPath) => {
    expectRefusedBySchema(advanceNodeVisitSchema, {
      finish: { path: "plan", visit: 1, result },
      start: { path: startPath, visit: 1, nodeKind: "compute" },
    });
  });
});
