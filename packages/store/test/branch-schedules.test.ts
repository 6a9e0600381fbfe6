import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openHarness, refused, runningRun, type StoreHarness, saved } from "./fixtures.js";

// A run with parallel branches has several open visits; each branch that waits saves its own due
// time on its visit (`scheduleVisit`), and the run parks once, for the earliest.

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const waiting = (path: string, until: number) => ({
  code: "waiting" as const,
  message: `waiting until ${until}`,
  path,
  visit: 1,
  until,
});

describe("schedules of several open visits", () => {
  it("saves each branch's due time without parking, parks for the earliest, and a resume sees both", () => {
    const { store, clock } = h;
    const fence = runningRun(store, "fork-1");
    for (const path of ["fan", "fan/a/a", "fan/b/b"]) {
      saved(store.startNodeVisit(fence, { path, visit: 1, nodeKind: path === "fan" ? "parallel" : "wait" }));
    }
    const soon = clock.now + 60_000;
    const later = clock.now + 120_000;
    saved(store.scheduleVisit(fence, waiting("fan/b/b", later)));
    expect(store.getRun("fork-1")?.status).toBe("running");
    saved(store.scheduleVisit(fence, waiting("fan/a/a", soon)));
    saved(store.parkRun(fence, waiting("fan/a/a", soon)));
    expect(store.nextWakeAt()).toBe(soon);

    const claim = saved(
      store.claimRun({ runId: "fork-1", claimToken: "again", leaseMs: 30_000, resume: true }),
    );
    const next = { runId: "fork-1", generation: claim.command.generation, claimToken: "again" };
    saved(store.markRunning(next));
    const a = saved(store.startNodeVisit(next, { path: "fan/a/a", visit: 1, nodeKind: "wait" }));
    const b = saved(store.startNodeVisit(next, { path: "fan/b/b", visit: 1, nodeKind: "wait" }));
    expect(a).toMatchObject({ status: "running", attempt: 2, dueAt: soon });
    expect(b).toMatchObject({ status: "running", attempt: 2, dueAt: later });
  });

  it("refuses a reason that is not a wait or retry, a visit that is not open, and a run that is not running", () => {
    const { store, clock } = h;
    const fence = runningRun(store, "fork-2");
    saved(store.startNodeVisit(fence, { path: "fan/a/a", visit: 1, nodeKind: "wait" }));
    expect(
      refused(store.scheduleVisit(fence, { code: "paused", message: "Paused by the user." })),
    ).toMatchObject({
      kind: "state_mismatch",
      expected: "a wait or retry reason",
    });
    expect(refused(store.scheduleVisit(fence, waiting("fan/b/b", clock.now + 1_000)))).toMatchObject({
      kind: "visit_not_open",
    });
    saved(store.parkRun(fence, { code: "paused", message: "Paused by the user." }));
    expect(refused(store.scheduleVisit(fence, waiting("fan/a/a", clock.now + 1_000))).kind).toBe(
      "stale_fence",
    );
    expect(store.getRun("fork-2")?.status).toBe("parked");
  });
});
