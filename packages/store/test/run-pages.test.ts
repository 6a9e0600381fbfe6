import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openHarness, preparedRun, type StoreHarness, saved } from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function reserve(runId: string): void {
  saved(h.store.reservePreparedRun(preparedRun(runId, { origin: { kind: "cli" } })));
}

describe("eachRun", () => {
  it("reads every run of the statuses, oldest first, across pages of runs created in the same millisecond", () => {
    // Same created_at for all: the page boundary falls inside a tie, which run_id breaks.
    for (const id of ["r-e", "r-a", "r-g", "r-c", "r-b", "r-f", "r-d"]) reserve(id);
    h.clock.now += 1;
    reserve("r-0-later");
    saved(h.store.claimRun({ runId: "r-c", claimToken: "t", leaseMs: 1000 }));
    const queued = [...h.store.eachRun(["queued"], 3)].map((r) => r.runId);
    expect(queued).toEqual(["r-a", "r-b", "r-d", "r-e", "r-f", "r-g", "r-0-later"]);
    expect([...h.store.eachRun(["queued", "starting"], 2)]).toHaveLength(8);
    expect([...h.store.eachRun(["parked"], 3)]).toEqual([]);
  });

  it("reads a run once even when earlier runs leave the status between pages", () => {
    for (let i = 0; i < 10; i++) {
      reserve(`r-${i}`);
      h.clock.now += 1;
    }
    const seen: string[] = [];
    for (const run of h.store.eachRun(["queued"], 3)) {
      seen.push(run.runId);
      // What reconciliation does: each run it reads moves on to `starting`.
      saved(h.store.claimRun({ runId: run.runId, claimToken: `t-${run.runId}`, leaseMs: 1000 }));
    }
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `r-${i}`));
  });
});
