import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openHarness, runningRun, type StoreHarness, saved } from "./fixtures.js";

// The history says of a visit still open when its run stopped what the run's view says of it.

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function statuses(runId: string): Record<string, string> {
  return Object.fromEntries(h.store.readRunHistory(runId).steps.map((s) => [s.path, s.status]));
}

describe("readRunHistory: visits open when the run stopped", () => {
  it("shows the open visit of a cancelled run as cancelled, and keeps finished ones as saved", () => {
    const fence = runningRun(h.store, "r1");
    saved(h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "compute" }));
    saved(
      h.store.finishNodeVisit(fence, {
        path: "plan",
        visit: 1,
        result: { status: "succeeded", output: 1, next: "build" },
      }),
    );
    saved(h.store.startNodeVisit(fence, { path: "build", visit: 1, nodeKind: "shell" }));
    expect(statuses("r1")).toEqual({ plan: "succeeded", build: "running" });
    saved(h.store.cancelRun({ runId: "r1" }));
    expect(statuses("r1")).toEqual({ plan: "succeeded", build: "cancelled" });
  });

  it("shows every open visit of a parallel run as cancelled: the fork's and each branch's", () => {
    const fence = runningRun(h.store, "r2");
    saved(h.store.startNodeVisit(fence, { path: "fan", visit: 1, nodeKind: "parallel" }));
    saved(h.store.startNodeVisit(fence, { path: "fan/a/a", visit: 1, nodeKind: "shell" }));
    saved(h.store.startNodeVisit(fence, { path: "fan/b/b", visit: 1, nodeKind: "compute" }));
    const failed = { status: "failed" as const, error: { code: "node_failed" as const, message: "No." } };
    saved(h.store.finishNodeVisit(fence, { path: "fan/b/b", visit: 1, result: failed }));
    saved(h.store.cancelRun({ runId: "r2" }));
    expect(statuses("r2")).toEqual({ fan: "cancelled", "fan/a/a": "cancelled", "fan/b/b": "failed" });
  });

  it("shows the open visit of a paused run as paused, and as running again once it resumes", () => {
    const fence = runningRun(h.store, "r3");
    saved(h.store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "compute" }));
    saved(h.store.parkRun(fence, { code: "paused", message: "Paused by request." }));
    expect(h.store.getRun("r3")).toMatchObject({ status: "parked", paused: true });
    expect(statuses("r3")).toEqual({ plan: "paused" });
    saved(h.store.claimRun({ runId: "r3", claimToken: "c2", leaseMs: 30_000, resume: true }));
    expect(statuses("r3")).toEqual({ plan: "running" });
  });
});
