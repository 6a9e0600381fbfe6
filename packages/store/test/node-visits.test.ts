import {
  type EffectResult,
  type Fence,
  type FinishNodeVisit,
  fenceSchema,
  finishNodeVisitSchema,
  type JsonValue,
  type NodeVisitResult,
  type ReserveEffect,
  reserveEffectSchema,
  type SafeError,
  type StartNodeVisit,
  settleEffectSchema,
  startNodeVisitSchema,
} from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  flatRun,
  crashAndRelaunch,
  effectIdFor,
  expectRefusedBySchema,
  expectStoreError,
  openHarness,
  preparedRun,
  runningRun,
  runSnapshot,
  type StoreHarness,
  saved,
} from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUN = "visits-1";

function lastEvent(runId: string) {
  return h.store.listRunEvents(runId).at(-1);
}

function startVisit(fence: Fence, path: string, visit: number) {
  return saved(h.store.startNodeVisit(fence, { path, visit, nodeKind: "compute" }));
}

function succeed(
  fence: Fence,
  path: string,
  visit: number,
  output: JsonValue = { ok: true },
  next: string | null = null,
) {
  return saved(
    h.store.finishNodeVisit(fence, { path, visit, result: { status: "succeeded", output, next } }),
  );
}

/** Reopen the store on a small blob limit, so an oversized value is refused. */
function useSmallBlobs(): void {
  h.cleanup();
  h = openHarness({ maxBlobBytes: 256 });
}

describe("startNodeVisit", () => {
  it("opens a new visit as applied with attempt 1, moves the cursor, and is not progress", () => {
    const fence = runningRun(h.store, RUN);
    const before = runSnapshot(h.store, RUN);

    const started = h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "agent" });

    expect(started).toEqual({
      kind: "applied",
      value: { status: "running", path: "plan", visit: 1, attempt: 1 },
    });
    const run = h.store.getRun(RUN);
    expect(run?.revision).toBe(before.revision + 1);
    expect(run?.progressRevision).toBe(before.progressRevision);
    expect(run?.stepCount).toBe(1);
    expect(run?.cursor).toEqual({ path: "plan", visit: 1 });
    expect(h.store.listRunSteps(RUN)).toEqual([
      expect.objectContaining({ path: "plan", visit: 1, nodeKind: "agent", attempt: 1, status: "running" }),
    ]);
    expect(lastEvent(RUN)).toMatchObject({ type: "node.started", path: "plan", visit: 1 });
  });

  it("gives a later re-entry of the same node the next visit number", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "loop/body", 1);
    succeed(fence, "loop/body", 1, { i: 1 }, null);

    expect(h.store.startNodeVisit(fence, { path: "loop/body", visit: 2, nodeKind: "compute" })).toEqual({
      kind: "applied",
      value: { status: "running", path: "loop/body", visit: 2, attempt: 1 },
    });
    expect(h.store.getRun(RUN)?.stepCount).toBe(2);
    expect(h.store.listRunSteps(RUN).map((s) => [s.path, s.visit, s.status])).toEqual([
      ["loop/body", 1, "succeeded"],
      ["loop/body", 2, "running"],
    ]);
  });

  it("counts visits per full path, so the same local name under two parents both start at visit 1", () => {
    const fence = runningRun(h.store, RUN);
    expect(startVisit(fence, "workspace/inspect", 1)).toMatchObject({ visit: 1, attempt: 1 });
    succeed(fence, "workspace/inspect", 1);
    expect(startVisit(fence, "documentation/workspace/inspect", 1)).toMatchObject({ visit: 1, attempt: 1 });
  });

  it("saves a visit's deadline when it first opens and keeps it when a crash reopens the visit", () => {
    const first = runningRun(h.store, RUN);
    const opened = saved(
      h.store.startNodeVisit(first, { path: "ask", visit: 1, nodeKind: "agent", timeoutMs: 60_000 }),
    );
    const at = h.clock.now + 60_000;
    expect(opened).toEqual({
      status: "running",
      path: "ask",
      visit: 1,
      attempt: 1,
      deadline: { timeoutMs: 60_000, at },
    });
    // The file is closed and opened again, time passes, and the relaunched worker asks for a fresh
    // ten minutes: the saved deadline wins.
    h.reopen();
    h.clock.now += 45_000;
    const second = crashAndRelaunch(h.store, first, "claim-2");
    const reopened = saved(
      h.store.startNodeVisit(second, { path: "ask", visit: 1, nodeKind: "agent", timeoutMs: 600_000 }),
    );
    expect(reopened).toMatchObject({ attempt: 2, deadline: { timeoutMs: 60_000, at } });
    expect(h.store.listRunSteps(RUN)[0]).toMatchObject({ deadlineAt: at, timeoutMs: 60_000 });
    // A visit opened without a deadline (opted out, or a kind without one) has none.
    succeed(second, "ask", 1);
    expect(
      saved(h.store.startNodeVisit(second, { path: "next", visit: 1, nodeKind: "shell", timeoutMs: null })),
    ).not.toHaveProperty("deadline");
    expect(h.store.listRunSteps(RUN)[1]).toMatchObject({ deadlineAt: null, timeoutMs: null });
  });

  it("leaves a deadline outside 1 ms to 7 days to the protocol schema, which refuses it before the store", () => {
    for (const timeoutMs of [0, -1, 1.5, 8 * 24 * 60 * 60_000]) {
      expectRefusedBySchema(startNodeVisitSchema, { path: "ask", visit: 1, nodeKind: "agent", timeoutMs });
    }
  });

  it("keeps the visit number and increments the attempt when a crash retries an unfinished visit", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "build", 1);

    const second = crashAndRelaunch(h.store, first, "claim-2");
    expect(h.store.startNodeVisit(second, { path: "build", visit: 1, nodeKind: "compute" })).toEqual({
      kind: "applied",
      value: { status: "running", path: "build", visit: 1, attempt: 2 },
    });
    expect(lastEvent(RUN)).toMatchObject({
      type: "node.retried",
      path: "build",
      visit: 1,
      data: { attempt: 2 },
    });

    const third = crashAndRelaunch(h.store, second, "claim-3");
    expect(startVisit(third, "build", 1)).toEqual({ status: "running", path: "build", visit: 1, attempt: 3 });

    // Still one visit: a retry is not a new visit and does not count as another step.
    expect(h.store.listRunSteps(RUN)).toEqual([
      expect.objectContaining({ path: "build", visit: 1, attempt: 3, status: "running" }),
    ]);
    expect(h.store.getRun(RUN)?.stepCount).toBe(1);
  });

  it("adopts a finished visit with its saved output and next path, so the work is not repeated", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "plan", 1);
    const output = { summary: "two files", files: ["a.ts", "b.ts"], nested: { z: 1, a: [true, null] } };
    saved(
      h.store.finishNodeVisit(first, {
        path: "plan",
        visit: 1,
        result: { status: "succeeded", output, next: "review" },
      }),
    );
    const second = crashAndRelaunch(h.store, first, "claim-2");
    const before = runSnapshot(h.store, RUN);

    const again = h.store.startNodeVisit(second, { path: "plan", visit: 1, nodeKind: "compute" });

    expect(again).toEqual({
      kind: "adopted",
      value: {
        status: "finished",
        path: "plan",
        visit: 1,
        attempt: 1,
        result: { status: "succeeded", output, next: "review" },
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)).toEqual([
      expect.objectContaining({
        path: "plan",
        visit: 1,
        attempt: 1,
        status: "succeeded",
        nextPath: "review",
      }),
    ]);
  });

  it.each(["failed", "timed_out"] as const)("adopts a %s visit with its saved error text", (status) => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "test", 1);
    const error = {
      code: status === "failed" ? ("node_failed" as const) : ("node_timed_out" as const),
      message: 'npm test exited 1: {"broken": json',
    };
    saved(h.store.finishNodeVisit(fence, { path: "test", visit: 1, result: { status, error } }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.startNodeVisit(fence, { path: "test", visit: 1, nodeKind: "shell" })).toEqual({
      kind: "adopted",
      value: { status: "finished", path: "test", visit: 1, attempt: 1, result: { status, error } },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses to skip a visit number and changes nothing", () => {
    const fence = runningRun(h.store, RUN);
    let before = runSnapshot(h.store, RUN);

    expect(h.store.startNodeVisit(fence, { path: "plan", visit: 2, nodeKind: "compute" })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "step",
        id: `${RUN}:plan`,
        expected: "visit 1",
        actual: "visit 2",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)).toEqual([]);

    startVisit(fence, "plan", 1);
    succeed(fence, "plan", 1);
    before = runSnapshot(h.store, RUN);
    expect(h.store.startNodeVisit(fence, { path: "plan", visit: 3, nodeKind: "compute" })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "step",
        id: `${RUN}:plan`,
        expected: "visit 2",
        actual: "visit 3",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)).toHaveLength(1);
  });

  it("refuses a stale fence, a wrong claim token and a revision mismatch, changing nothing", () => {
    const old = runningRun(h.store, RUN);
    const current = crashAndRelaunch(h.store, old, "claim-2");
    const before = runSnapshot(h.store, RUN);
    const visit: StartNodeVisit = { path: "plan", visit: 1, nodeKind: "compute" };

    expect(h.store.startNodeVisit(old, visit)).toEqual({
      kind: "conflict",
      evidence: {
        kind: "stale_fence",
        runId: RUN,
        expectedGeneration: old.generation,
        actualGeneration: current.generation,
        status: "running",
      },
    });
    expect(h.store.startNodeVisit({ ...current, claimToken: "someone-else" }, visit)).toMatchObject({
      kind: "conflict",
      evidence: { kind: "stale_fence", expectedGeneration: current.generation },
    });
    expect(h.store.startNodeVisit({ ...current, expectedRevision: before.revision - 1 }, visit)).toEqual({
      kind: "conflict",
      evidence: {
        kind: "revision_mismatch",
        runId: RUN,
        expected: before.revision - 1,
        actual: before.revision,
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)).toEqual([]);

    expect(h.store.startNodeVisit({ ...current, expectedRevision: before.revision }, visit).kind).toBe(
      "applied",
    );
  });

  it("refuses a visit while the run is not running", () => {
    saved(h.store.reservePreparedRun(preparedRun(RUN)));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-1", leaseMs: 30_000 }));
    const fence = { runId: RUN, generation: claim.command.generation, claimToken: "claim-1" };
    const before = runSnapshot(h.store, RUN);

    expect(h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "compute" })).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "running", actual: "starting" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("parks a run with a pause request at the next node boundary, but still adopts a finished visit", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    succeed(fence, "plan", 1, { plan: "x" }, "build");
    saved(h.store.requestPause({ runId: RUN }));

    // A finished visit is saved work, not a boundary: the engine gets its result back.
    expect(h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "compute" }).kind).toBe(
      "adopted",
    );

    const reason = { code: "paused", message: "Paused at a node boundary by request." };
    expect(h.store.startNodeVisit(fence, { path: "build", visit: 1, nodeKind: "compute" })).toEqual({
      kind: "recoveryRequired",
      reason,
    });
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({
      status: "parked",
      paused: true,
      claimed: false,
      recoveryReason: reason,
      generation: fence.generation + 1,
    });
    expect(h.store.listRunSteps(RUN).map((s) => s.path)).toEqual(["plan"]);
    expect(lastEvent(RUN)).toMatchObject({ type: "run.parked", data: { reason: "paused" } });
    // The paused worker's claim is gone.
    expect(h.store.startNodeVisit(fence, { path: "build", visit: 1, nodeKind: "compute" })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "stale_fence", status: "parked" },
    });
  });

  it("refuses a branch's start (holdOnPause) on a pause without parking: the run still runs and finishes visits", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    saved(h.store.requestPause({ runId: RUN }));

    const reason = { code: "paused" as const, message: "Paused at a node boundary by request." };
    const held = { path: "build", visit: 1, nodeKind: "compute" as const, holdOnPause: true as const };
    expect(h.store.startNodeVisit(fence, held)).toEqual({ kind: "recoveryRequired", reason });
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({ status: "running", paused: true, claimed: true });
    expect(h.store.listRunSteps(RUN).map((s) => s.path)).toEqual(["plan"]);
    // Another branch's visit in flight still finishes and is saved; then the fork parks the run itself.
    succeed(fence, "plan", 1, { plan: "x" }, "build");
    saved(h.store.parkRun(fence, reason));
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({
      status: "parked",
      paused: true,
      recoveryReason: reason,
    });
  });

  it("keeps a pause through a lost worker's relaunch; only an explicit resume clears it", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    saved(h.store.requestPause({ runId: RUN }));
    saved(h.store.parkRun(fence, { code: "worker_lost", message: "lost", launchId: "l-1" }));
    expect(h.store.getRun(RUN)).toMatchObject({ status: "parked", paused: true });
    const relaunch = saved(h.store.claimRun({ runId: RUN, claimToken: "relaunch", leaseMs: 30_000 }));
    expect(h.store.getRun(RUN)).toMatchObject({ status: "starting", paused: true });
    const next = { runId: RUN, generation: relaunch.command.generation, claimToken: "relaunch" };
    saved(h.store.markRunning(next));
    // The reopened visit is a boundary: the relaunched worker parks there, paused.
    expect(h.store.startNodeVisit(next, { path: "plan", visit: 1, nodeKind: "compute" })).toMatchObject({
      kind: "recoveryRequired",
      reason: { code: "paused" },
    });
    saved(h.store.claimRun({ runId: RUN, claimToken: "resume", leaseMs: 30_000, resume: true }));
    expect(h.store.getRun(RUN)).toMatchObject({ status: "starting", paused: false });
  });

  it("reports an unknown run as not_found", () => {
    expect(
      h.store.startNodeVisit(
        { runId: "nope-1", generation: 1, claimToken: "claim" },
        { path: "a", visit: 1, nodeKind: "compute" },
      ),
    ).toEqual({ kind: "conflict", evidence: { kind: "not_found", resource: "run", id: "nope-1" } });
  });

  it.each([
    ["visit 0", { path: "plan", visit: 0, nodeKind: "compute" }],
    ["a fractional visit", { path: "plan", visit: 1.5, nodeKind: "compute" }],
    ["a path with a space", { path: "bad path", visit: 1, nodeKind: "compute" }],
    ["a path with a leading slash", { path: "/plan", visit: 1, nodeKind: "compute" }],
    ["an unknown node kind", { path: "plan", visit: 1, nodeKind: "robot" }],
    ["a missing node kind", { path: "plan", visit: 1 }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    expectRefusedBySchema(startNodeVisitSchema, req);
  });

  it("leaves a malformed fence to the protocol schema", () => {
    expectRefusedBySchema(fenceSchema, { runId: RUN, generation: -1, claimToken: "claim" });
    expectRefusedBySchema(fenceSchema, { runId: RUN, generation: 1, claimToken: "has space" });
  });
});

describe("finishNodeVisit", () => {
  it("closes an open visit as applied and moves the progress revision", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    const before = runSnapshot(h.store, RUN);

    const finished = h.store.finishNodeVisit(fence, {
      path: "plan",
      visit: 1,
      result: { status: "succeeded", output: { steps: [1, 2] }, next: "build" },
    });

    expect(finished).toEqual({
      kind: "applied",
      value: {
        status: "finished",
        path: "plan",
        visit: 1,
        attempt: 1,
        result: { status: "succeeded", output: { steps: [1, 2] }, next: "build" },
      },
    });
    const run = h.store.getRun(RUN);
    expect(run?.revision).toBe(before.revision + 1);
    expect(run?.progressRevision).toBe(before.revision + 1);
    expect(h.store.listRunSteps(RUN)).toEqual([
      expect.objectContaining({ status: "succeeded", nextPath: "build", finishedAt: h.clock.now }),
    ]);
    expect(lastEvent(RUN)).toMatchObject({ type: "node.succeeded", path: "plan", visit: 1, data: null });
  });

  it("moves progress on finish but not on start", () => {
    const fence = runningRun(h.store, RUN);
    const p0 = h.store.getRun(RUN)?.progressRevision;
    startVisit(fence, "a", 1);
    expect(h.store.getRun(RUN)?.progressRevision).toBe(p0);
    succeed(fence, "a", 1);
    const p1 = h.store.getRun(RUN)?.progressRevision;
    expect(p1).toBeGreaterThan(p0 ?? Number.POSITIVE_INFINITY);
    startVisit(fence, "b", 1);
    expect(h.store.getRun(RUN)?.progressRevision).toBe(p1);
  });

  it("saves a failed visit with its error code and text", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "test", 1);
    const error = { code: "node_failed" as const, message: "exit 2: not { json" };

    expect(
      h.store.finishNodeVisit(fence, { path: "test", visit: 1, result: { status: "failed", error } }),
    ).toEqual({
      kind: "applied",
      value: { status: "finished", path: "test", visit: 1, attempt: 1, result: { status: "failed", error } },
    });
    expect(h.store.listRunSteps(RUN)).toEqual([
      expect.objectContaining({ status: "failed", errorCode: "node_failed", nextPath: null }),
    ]);
    expect(lastEvent(RUN)).toMatchObject({ type: "node.failed", data: { code: "node_failed" } });
  });

  it("records the attempt that finished a retried visit", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "build", 1);
    const second = crashAndRelaunch(h.store, first, "claim-2");
    startVisit(second, "build", 1);
    expect(succeed(second, "build", 1, "built")).toMatchObject({ attempt: 2, status: "finished" });
  });

  it("adopts an identical second finish (whatever the key order) and changes nothing", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    succeed(fence, "plan", 1, { a: 1, b: { c: 2, d: 3 } }, "build");
    const before = runSnapshot(h.store, RUN);

    expect(
      h.store.finishNodeVisit(fence, {
        path: "plan",
        visit: 1,
        result: { status: "succeeded", output: { b: { d: 3, c: 2 }, a: 1 }, next: "build" },
      }),
    ).toEqual({
      kind: "adopted",
      value: {
        status: "finished",
        path: "plan",
        visit: 1,
        attempt: 1,
        result: { status: "succeeded", output: { a: 1, b: { c: 2, d: 3 } }, next: "build" },
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("adopts an identical failed finish", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "test", 1);
    const result = { status: "failed" as const, error: { code: "node_failed" as const, message: "boom" } };
    saved(h.store.finishNodeVisit(fence, { path: "test", visit: 1, result }));
    const before = runSnapshot(h.store, RUN);
    expect(h.store.finishNodeVisit(fence, { path: "test", visit: 1, result })).toMatchObject({
      kind: "adopted",
      value: { result },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it.each<[string, NodeVisitResult]>([
    ["another output", { status: "succeeded", output: { a: 2 }, next: "build" }],
    ["another next path", { status: "succeeded", output: { a: 1 }, next: "deploy" }],
    ["an exit instead of a next path", { status: "succeeded", output: { a: 1 }, next: null }],
    ["a failure", { status: "failed", error: { code: "node_failed", message: "boom" } }],
    ["a timeout", { status: "timed_out", error: { code: "node_timed_out", message: "slow" } }],
  ])("refuses a second finish with %s and changes nothing", (_what, result) => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    succeed(fence, "plan", 1, { a: 1 }, "build");
    const before = runSnapshot(h.store, RUN);

    expect(h.store.finishNodeVisit(fence, { path: "plan", visit: 1, result })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "step",
        id: `${RUN}:plan:1`,
        expected: "running",
        actual: "succeeded",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "compute" })).toMatchObject({
      kind: "adopted",
      value: { result: { status: "succeeded", output: { a: 1 }, next: "build" } },
    });
  });

  it("refuses a second failed finish with another error message or code", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "test", 1);
    saved(
      h.store.finishNodeVisit(fence, {
        path: "test",
        visit: 1,
        result: { status: "failed", error: { code: "node_failed", message: "exit 1" } },
      }),
    );
    const before = runSnapshot(h.store, RUN);
    const errors: SafeError[] = [
      { code: "node_failed", message: "exit 2" },
      { code: "output_invalid", message: "exit 1" },
    ];
    for (const error of errors) {
      expect(
        h.store.finishNodeVisit(fence, { path: "test", visit: 1, result: { status: "failed", error } }),
      ).toMatchObject({ kind: "conflict", evidence: { kind: "state_mismatch", actual: "failed" } });
    }
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses to finish a visit that was never opened (visit_not_open)", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    const before = runSnapshot(h.store, RUN);
    const result: NodeVisitResult = { status: "succeeded", output: null, next: null };

    expect(h.store.finishNodeVisit(fence, { path: "build", visit: 1, result })).toEqual({
      kind: "conflict",
      evidence: { kind: "visit_not_open", runId: RUN, path: "build", visit: 1 },
    });
    expect(h.store.finishNodeVisit(fence, { path: "plan", visit: 2, result })).toEqual({
      kind: "conflict",
      evidence: { kind: "visit_not_open", runId: RUN, path: "plan", visit: 2 },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses a stale fence and an unknown run, changing nothing", () => {
    const old = runningRun(h.store, RUN);
    startVisit(old, "plan", 1);
    const current = crashAndRelaunch(h.store, old, "claim-2");
    const before = runSnapshot(h.store, RUN);
    const req: FinishNodeVisit = {
      path: "plan",
      visit: 1,
      result: { status: "succeeded", output: 1, next: null },
    };

    expect(h.store.finishNodeVisit(old, req)).toEqual({
      kind: "conflict",
      evidence: {
        kind: "stale_fence",
        runId: RUN,
        expectedGeneration: old.generation,
        actualGeneration: current.generation,
        status: "running",
      },
    });
    expect(h.store.finishNodeVisit({ ...current, runId: "ghost-1" }, req)).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "ghost-1" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)[0]?.status).toBe("running");
  });

  it("refuses to finish while the relaunched run is still starting", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "plan", 1);
    saved(h.store.parkRun(first, { code: "worker_lost", message: "lost", launchId: "launch-1" }));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-2", leaseMs: 30_000 }));
    const starting = { runId: RUN, generation: claim.command.generation, claimToken: "claim-2" };
    const before = runSnapshot(h.store, RUN);

    expect(
      h.store.finishNodeVisit(starting, {
        path: "plan",
        visit: 1,
        result: { status: "succeeded", output: 1, next: null },
      }),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "running", actual: "starting" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("rejects an oversized output as payload_too_large and changes nothing", () => {
    useSmallBlobs();
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "plan", 1);
    const before = runSnapshot(h.store, RUN);

    const error = expectStoreError(
      () =>
        h.store.finishNodeVisit(fence, {
          path: "plan",
          visit: 1,
          result: { status: "succeeded", output: { text: "x".repeat(1000) }, next: null },
        }),
      "payload_too_large",
    );
    expect(error.message).toContain("256-byte limit");
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunSteps(RUN)[0]?.status).toBe("running");

    // The visit is still open and a bounded output is accepted.
    expect(succeed(fence, "plan", 1, { text: "short" })).toMatchObject({ status: "finished" });
  });

  it.each([
    ["an unknown status", { status: "done", output: 1, next: null }],
    ["an unknown error code", { status: "failed", error: { code: "oops", message: "x" } }],
    [
      "an error message over 512 characters",
      { status: "failed", error: { code: "node_failed", message: "x".repeat(513) } },
    ],
    ["a malformed next path", { status: "succeeded", output: 1, next: "not a path" }],
    ["a missing output", { status: "succeeded", next: null }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, result) => {
    expectRefusedBySchema(finishNodeVisitSchema, { path: "plan", visit: 1, result });
  });
});

describe("reserveEffect", () => {
  const request = { repo: "acme/app", branch: "main", files: ["a.ts"] };

  function reserveReq(fence: Fence, overrides: Partial<Omit<ReserveEffect, "effectId">> = {}): ReserveEffect {
    const path = overrides.path ?? "deploy";
    const visit = overrides.visit ?? 1;
    const effectType = overrides.effectType ?? "git_push";
    const ordinal = overrides.ordinal ?? 0;
    return {
      effectId: effectIdFor(fence.runId, path, visit, effectType, ordinal),
      path,
      visit,
      effectType,
      ordinal,
      mode: overrides.mode ?? "idempotent",
      request: overrides.request ?? request,
    };
  }

  it("reserves a new effect as applied and counts it as progress", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const before = runSnapshot(h.store, RUN);
    const req = reserveReq(fence);

    expect(h.store.reserveEffect(fence, req)).toEqual({
      kind: "applied",
      value: { status: "reserved", effectId: `${RUN}:deploy:1:git_push:0` },
    });
    const run = h.store.getRun(RUN);
    expect(run?.revision).toBe(before.revision + 1);
    expect(run?.progressRevision).toBe(before.revision + 1);
    expect(h.store.listRunEffects(RUN)).toEqual([
      {
        effectId: req.effectId,
        path: "deploy",
        visit: 1,
        effectType: "git_push",
        ordinal: 0,
        mode: "idempotent",
        status: "reserved",
      },
    ]);
    expect(lastEvent(RUN)).toMatchObject({
      type: "effect.reserved",
      path: "deploy",
      visit: 1,
      data: { effectType: "git_push", mode: "idempotent" },
    });
  });

  it("adopts an unsettled idempotent effect with the same request after a crash, so it re-runs under the same identity", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "deploy", 1);
    saved(h.store.reserveEffect(first, reserveReq(first)));

    const second = crashAndRelaunch(h.store, first, "claim-2");
    expect(startVisit(second, "deploy", 1)).toMatchObject({ status: "running", attempt: 2 });
    const before = runSnapshot(h.store, RUN);

    // The same request with its keys in another order is the same request.
    const again = h.store.reserveEffect(second, {
      ...reserveReq(second),
      request: { files: ["a.ts"], branch: "main", repo: "acme/app" },
    });
    expect(again).toEqual({
      kind: "adopted",
      value: { status: "reserved", effectId: `${RUN}:deploy:1:git_push:0` },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)).toHaveLength(1);
  });

  it.each<[string, Partial<ReserveEffect>]>([
    ["another request", { request: { repo: "acme/other" } }],
    ["another effect type", { effectType: "git_tag" }],
    ["another mode", { mode: "manual" }],
  ])("refuses the same identity with %s as request_mismatch, changing nothing", (_what, change) => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const original = reserveReq(fence);
    saved(h.store.reserveEffect(fence, original));
    const before = runSnapshot(h.store, RUN);

    expect(
      h.store.reserveEffect(fence, { ...reserveReq(fence, change), effectId: original.effectId }),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "request_mismatch", resource: "effect", id: original.effectId },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)).toEqual([
      expect.objectContaining({ status: "reserved", mode: "idempotent" }),
    ]);
  });

  it("refuses one effect ID claimed by another node visit or ordinal as request_mismatch", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    startVisit(fence, "release", 1);
    const original = reserveReq(fence);
    saved(h.store.reserveEffect(fence, original));
    const before = runSnapshot(h.store, RUN);

    for (const other of [reserveReq(fence, { path: "release" }), reserveReq(fence, { ordinal: 1 })]) {
      expect(h.store.reserveEffect(fence, { ...other, effectId: original.effectId })).toEqual({
        kind: "conflict",
        evidence: { kind: "request_mismatch", resource: "effect", id: original.effectId },
      });
    }
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("keeps composed effects with the same type and local node name apart by their full paths (execution identity)", () => {
    const fence = runningRun(h.store, RUN);
    const outer = { path: "workspace/inspect", request: { check: "outer", root: "." } };
    const inner = { path: "documentation/workspace/inspect", request: { check: "docs", root: "docs" } };

    startVisit(fence, outer.path, 1);
    const outerReq = reserveReq(fence, {
      path: outer.path,
      effectType: "workspace_check",
      request: outer.request,
    });
    expect(h.store.reserveEffect(fence, outerReq).kind).toBe("applied");
    saved(h.store.settleEffect(fence, { effectId: outerReq.effectId, result: { ok: true, value: "clean" } }));
    succeed(fence, outer.path, 1, "clean", inner.path);

    startVisit(fence, inner.path, 1);
    const innerReq = reserveReq(fence, {
      path: inner.path,
      effectType: "workspace_check",
      request: inner.request,
    });
    expect(innerReq.effectId).not.toBe(outerReq.effectId);
    expect(h.store.reserveEffect(fence, innerReq)).toEqual({
      kind: "applied",
      value: { status: "reserved", effectId: `${RUN}:documentation/workspace/inspect:1:workspace_check:0` },
    });
    expect(
      h.store
        .listRunEffects(RUN)
        .map((e) => [e.effectId, e.path, e.status])
        .sort(),
    ).toEqual([
      [`${RUN}:documentation/workspace/inspect:1:workspace_check:0`, inner.path, "reserved"],
      [`${RUN}:workspace/inspect:1:workspace_check:0`, outer.path, "settled"],
    ]);

    // The old local-name key (`inspect`) made both share one identity; the store rightly refuses that.
    const localKey = `${RUN}:inspect:1:workspace_check:0`;
    startVisit(fence, "other/inspect", 1);
    saved(
      h.store.reserveEffect(fence, { ...reserveReq(fence, { path: "other/inspect" }), effectId: localKey }),
    );
    expect(
      h.store.reserveEffect(fence, {
        ...reserveReq(fence, { path: "other/inspect", request: { different: true } }),
        effectId: localKey,
      }),
    ).toEqual({ kind: "conflict", evidence: { kind: "request_mismatch", resource: "effect", id: localKey } });
  });

  it("parks the run when a reserved manual effect is reserved again after a crash (manual_effect_unsettled)", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "deploy", 1);
    const req = reserveReq(first, { effectType: "send_invoice", mode: "manual" });
    expect(h.store.reserveEffect(first, req).kind).toBe("applied");

    const second = crashAndRelaunch(h.store, first, "claim-2");
    startVisit(second, "deploy", 1);

    const reason = {
      code: "manual_effect_unsettled",
      message:
        "Manual effect send_invoice was started but never settled; check whether it happened, then resume.",
      effectId: req.effectId,
    };
    expect(h.store.reserveEffect(second, req)).toEqual({ kind: "recoveryRequired", reason });
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({
      status: "parked",
      claimed: false,
      paused: false,
      recoveryReason: reason,
      generation: second.generation + 1,
    });
    expect(lastEvent(RUN)).toMatchObject({ type: "run.parked", data: { reason: "manual_effect_unsettled" } });
    expect(h.store.listRunEffects(RUN)).toEqual([
      expect.objectContaining({ status: "reserved", mode: "manual" }),
    ]);
    // The worker that found it holds no claim any more: it cannot run the effect a second time.
    expect(h.store.reserveEffect(second, req)).toMatchObject({
      kind: "conflict",
      evidence: { kind: "stale_fence", status: "parked" },
    });
  });

  it.each([
    ["idempotent", { ok: true, value: { pushed: "abc123" } }],
    ["manual", { ok: true, value: { invoice: 7 } }],
    ["idempotent", { ok: false, error: { code: "node_failed", message: "remote rejected: {bad" } }],
  ] as const)("adopts a settled %s effect with its saved result, so it never runs twice", (mode, result) => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "deploy", 1);
    const req = reserveReq(first, { mode });
    saved(h.store.reserveEffect(first, req));
    saved(h.store.settleEffect(first, { effectId: req.effectId, result }));

    const second = crashAndRelaunch(h.store, first, "claim-2");
    startVisit(second, "deploy", 1);
    const before = runSnapshot(h.store, RUN);

    expect(h.store.reserveEffect(second, req)).toEqual({
      kind: "adopted",
      value: { status: "settled", effectId: req.effectId, result },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.getRun(RUN)?.status).toBe("running");
  });

  it("refuses to reserve on a visit that is not open (visit_not_open), changing nothing", () => {
    const fence = runningRun(h.store, RUN);
    let before = runSnapshot(h.store, RUN);
    expect(h.store.reserveEffect(fence, reserveReq(fence))).toEqual({
      kind: "conflict",
      evidence: { kind: "visit_not_open", runId: RUN, path: "deploy", visit: 1 },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);

    startVisit(fence, "deploy", 1);
    succeed(fence, "deploy", 1);
    before = runSnapshot(h.store, RUN);
    expect(h.store.reserveEffect(fence, reserveReq(fence))).toEqual({
      kind: "conflict",
      evidence: { kind: "visit_not_open", runId: RUN, path: "deploy", visit: 1 },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)).toEqual([]);
  });

  it("refuses a stale fence, an unknown run and a run that is not running", () => {
    const old = runningRun(h.store, RUN);
    startVisit(old, "deploy", 1);
    saved(h.store.parkRun(old, { code: "worker_lost", message: "lost", launchId: "launch-1" }));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-2", leaseMs: 30_000 }));
    const starting = { runId: RUN, generation: claim.command.generation, claimToken: "claim-2" };
    const before = runSnapshot(h.store, RUN);

    expect(h.store.reserveEffect(old, reserveReq(old))).toMatchObject({
      kind: "conflict",
      evidence: {
        kind: "stale_fence",
        expectedGeneration: old.generation,
        actualGeneration: starting.generation,
      },
    });
    expect(h.store.reserveEffect(starting, reserveReq(starting))).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "running", actual: "starting" },
    });
    expect(h.store.reserveEffect({ ...starting, runId: "ghost-1" }, reserveReq(starting))).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "ghost-1" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)).toEqual([]);
  });

  it("rejects an oversized request as payload_too_large and changes nothing", () => {
    useSmallBlobs();
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const before = runSnapshot(h.store, RUN);
    expectStoreError(
      () => h.store.reserveEffect(fence, reserveReq(fence, { request: { body: "y".repeat(2000) } })),
      "payload_too_large",
    );
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)).toEqual([]);
  });

  it.each([
    ["an empty effect ID", { effectId: "" }],
    ["a negative ordinal", { ordinal: -1 }],
    ["an unknown mode", { mode: "sometimes" }],
    ["a malformed path", { path: "deploy//x" }],
    ["visit 0", { visit: 0 }],
    ["a missing request", { request: undefined }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, change) => {
    expectRefusedBySchema(reserveEffectSchema, {
      ...reserveReq({ runId: RUN, generation: 1, claimToken: "c" }),
      ...change,
    });
  });
});

describe("settleEffect", () => {
  function reserved(fence: Fence, effectType = "git_push") {
    const effectId = effectIdFor(fence.runId, "deploy", 1, effectType, 0);
    saved(
      h.store.reserveEffect(fence, {
        effectId,
        path: "deploy",
        visit: 1,
        effectType,
        ordinal: 0,
        mode: "idempotent",
        request: { ref: "main" },
      }),
    );
    return effectId;
  }

  it("settles a reserved effect as applied and counts it as progress", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    const before = runSnapshot(h.store, RUN);

    expect(h.store.settleEffect(fence, { effectId, result: { ok: true, value: { sha: "abc" } } })).toEqual({
      kind: "applied",
      value: { status: "settled", effectId, result: { ok: true, value: { sha: "abc" } } },
    });
    expect(h.store.getRun(RUN)).toMatchObject({
      revision: before.revision + 1,
      progressRevision: before.revision + 1,
    });
    expect(h.store.listRunEffects(RUN)[0]?.status).toBe("settled");
    expect(lastEvent(RUN)).toMatchObject({ type: "effect.settled", path: "deploy", visit: 1 });
  });

  it("saves a failed effect with its error", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    const result = { ok: false as const, error: { code: "node_failed" as const, message: "403 forbidden" } };
    expect(h.store.settleEffect(fence, { effectId, result })).toEqual({
      kind: "applied",
      value: { status: "settled", effectId, result },
    });
    expect(h.store.listRunEffects(RUN)[0]?.status).toBe("failed");
    expect(lastEvent(RUN)).toMatchObject({ type: "effect.failed" });
  });

  it.each<EffectResult>([
    { ok: true, value: { sha: "abc", tags: ["v1"] } },
    { ok: false, error: { code: "node_failed", message: "403 forbidden" } },
  ])("adopts an identical second settle and changes nothing (%o)", (result) => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    saved(h.store.settleEffect(fence, { effectId, result }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.settleEffect(fence, { effectId, result })).toEqual({
      kind: "adopted",
      value: { status: "settled", effectId, result },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it.each([
    ["another value", { ok: true, value: { sha: "def" } }, "settled"],
    ["a failure", { ok: false, error: { code: "node_failed", message: "x" } }, "settled"],
  ] as const)("refuses a second settle with %s and changes nothing", (_what, second, actual) => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    saved(h.store.settleEffect(fence, { effectId, result: { ok: true, value: { sha: "abc" } } }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.settleEffect(fence, { effectId, result: second })).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "effect", id: effectId, expected: "reserved", actual },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses a second failure settle with another code, message or a success", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    saved(
      h.store.settleEffect(fence, {
        effectId,
        result: { ok: false, error: { code: "node_failed", message: "403 forbidden" } },
      }),
    );
    const before = runSnapshot(h.store, RUN);
    const results: EffectResult[] = [
      { ok: false, error: { code: "node_failed", message: "500 server error" } },
      { ok: false, error: { code: "effect_conflict", message: "403 forbidden" } },
      { ok: true, value: null },
    ];
    for (const result of results) {
      expect(h.store.settleEffect(fence, { effectId, result })).toEqual({
        kind: "conflict",
        evidence: {
          kind: "state_mismatch",
          resource: "effect",
          id: effectId,
          expected: "reserved",
          actual: "failed",
        },
      });
    }
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("reports an unknown effect, or one of another run, as not_found", () => {
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const other = runningRun(h.store, "visits-2", { origin: { kind: "pi", sessionId: "session-2" } });
    startVisit(other, "deploy", 1);
    const othersEffect = reserved(other);
    const before = runSnapshot(h.store, RUN);

    expect(
      h.store.settleEffect(fence, { effectId: "no-such-effect", result: { ok: true, value: 1 } }),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "effect", id: "no-such-effect" },
    });
    expect(h.store.settleEffect(fence, { effectId: othersEffect, result: { ok: true, value: 1 } })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "effect", id: othersEffect },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects("visits-2")[0]?.status).toBe("reserved");
  });

  it("refuses a stale fence and a run that is not running, changing nothing", () => {
    const old = runningRun(h.store, RUN);
    startVisit(old, "deploy", 1);
    const effectId = reserved(old);
    saved(h.store.parkRun(old, { code: "worker_lost", message: "lost", launchId: "launch-1" }));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-2", leaseMs: 30_000 }));
    const starting = { runId: RUN, generation: claim.command.generation, claimToken: "claim-2" };
    const before = runSnapshot(h.store, RUN);
    const result: EffectResult = { ok: true, value: "done" };

    expect(h.store.settleEffect(old, { effectId, result })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "stale_fence", runId: RUN },
    });
    expect(h.store.settleEffect(starting, { effectId, result })).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "running", actual: "starting" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)[0]?.status).toBe("reserved");

    // Once running again, the relaunched worker can settle it.
    saved(h.store.markRunning(starting));
    expect(h.store.settleEffect(starting, { effectId, result }).kind).toBe("applied");
  });

  it("rejects an oversized value as payload_too_large and changes nothing", () => {
    useSmallBlobs();
    const fence = runningRun(h.store, RUN);
    startVisit(fence, "deploy", 1);
    const effectId = reserved(fence);
    const before = runSnapshot(h.store, RUN);
    expectStoreError(
      () => h.store.settleEffect(fence, { effectId, result: { ok: true, value: "z".repeat(5000) } }),
      "payload_too_large",
    );
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listRunEffects(RUN)[0]?.status).toBe("reserved");
  });

  it.each([
    ["a result without ok", { value: 1 }],
    ["a failure without an error", { ok: false }],
    ["a failure with an unknown code", { ok: false, error: { code: "nope", message: "x" } }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, result) => {
    expectRefusedBySchema(settleEffectSchema, { effectId: `${RUN}:deploy:1:git_push:0`, result });
  });

  it("lets a relaunched worker settle an effect the crashed worker reserved", () => {
    const first = runningRun(h.store, RUN);
    startVisit(first, "deploy", 1);
    const effectId = reserved(first);
    const second = crashAndRelaunch(h.store, first, "claim-2");
    startVisit(second, "deploy", 1);
    expect(
      saved(
        h.store.reserveEffect(second, {
          effectId,
          path: "deploy",
          visit: 1,
          effectType: "git_push",
          ordinal: 0,
          mode: "idempotent",
          request: { ref: "main" },
        }),
      ),
    ).toEqual({ status: "reserved", effectId });
    expect(h.store.settleEffect(second, { effectId, result: { ok: true, value: 1 } }).kind).toBe("applied");
  });
});
