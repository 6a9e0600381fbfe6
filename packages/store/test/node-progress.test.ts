import Database from "better-sqlite3";
import { join } from "node:path";
import { nodeProgressReportSchema, type ProgressState } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROGRESS_SAMPLES_MAX, STATE_FILE_NAME } from "../src/index.js";
import {
  crashAndRelaunch,
  expectRefusedBySchema,
  openHarness,
  refused,
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

const RUN = "progress-1";

function state(done: number | null, total: number | null, message: string | null = null): ProgressState {
  return { done, total, message };
}

/** The rows of `run_progress` as the file holds them, read beside the store's own connection. */
function rawRows(): Array<{ path: string; visit: number }> {
  const db = new Database(join(h.dir, STATE_FILE_NAME), { readonly: true });
  try {
    return db.prepare("SELECT path, visit FROM run_progress ORDER BY path").all() as never;
  } finally {
    db.close();
  }
}

describe("saved node progress", () => {
  it("keeps the latest state of a running visit, counts its saves and keeps the first and latest readings", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "compute" }));
    const before = runSnapshot(h.store, RUN);
    const firstAt = h.clock.now;
    for (let done = 1; done <= 40; done += 1) {
      h.clock.now += 250;
      saved(
        h.store.saveNodeProgress(fence, {
          path: "work",
          visit: 1,
          attempt: 1,
          state: state(done, 100, `at ${done}`),
        }),
      );
    }
    const [record] = h.store.listNodeProgress(RUN);
    expect(record).toMatchObject({
      path: "work",
      visit: 1,
      attempt: 1,
      state: state(40, 100, "at 40"),
      saves: 40,
    });
    expect(record?.firstAt).toBe(firstAt + 250);
    expect(record?.updatedAt).toBe(h.clock.now);
    // The first reading is the rate's baseline; then the latest ones.
    expect(record?.samples).toHaveLength(PROGRESS_SAMPLES_MAX);
    expect(record?.samples[0]).toEqual({ at: firstAt + 250, done: 1 });
    expect(record?.samples.at(-1)).toEqual({ at: h.clock.now, done: 40 });
    expect(record?.samples[1]?.done).toBe(40 - PROGRESS_SAMPLES_MAX + 2);
    // Not a run change: no revision, no trace event.
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("is saved in the file: a reopened store still has it", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "compute" }));
    saved(
      h.store.saveNodeProgress(fence, { path: "work", visit: 1, attempt: 1, state: state(3, 9, "three") }),
    );
    h.reopen();
    expect(h.store.listNodeProgress(RUN).map((r) => r.state)).toEqual([state(3, 9, "three")]);
  });

  it("refuses a stale claim, a visit that is not running, and another attempt, changing nothing", () => {
    const fence = runningRun(h.store, RUN);
    const report = { path: "work", visit: 1, attempt: 1, state: state(1, 2) };
    expect(refused(h.store.saveNodeProgress(fence, report))).toMatchObject({
      kind: "state_mismatch",
      resource: "step",
    });
    saved(h.store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "compute" }));
    expect(refused(h.store.saveNodeProgress(fence, { ...report, attempt: 2 }))).toMatchObject({
      kind: "state_mismatch",
      actual: "running attempt 1",
    });
    expect(refused(h.store.saveNodeProgress({ ...fence, claimToken: "other" }, report))).toMatchObject({
      kind: "stale_fence",
    });
    expect(h.store.listNodeProgress(RUN)).toEqual([]);
    expect(rawRows()).toEqual([]);
  });

  it("keeps a reopened visit's progress until the new attempt reports, which starts the readings over", () => {
    const first = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(first, { path: "work", visit: 1, nodeKind: "compute" }));
    saved(h.store.saveNodeProgress(first, { path: "work", visit: 1, attempt: 1, state: state(5, 10) }));
    const second = crashAndRelaunch(h.store, first, "claim-2");
    const reopened = saved(h.store.startNodeVisit(second, { path: "work", visit: 1, nodeKind: "compute" }));
    expect(reopened).toMatchObject({ status: "running", attempt: 2 });
    expect(h.store.listNodeProgress(RUN).map((r) => [r.attempt, r.state.done])).toEqual([[1, 5]]);
    h.clock.now += 1_000;
    saved(h.store.saveNodeProgress(second, { path: "work", visit: 1, attempt: 2, state: state(1, 10) }));
    const [record] = h.store.listNodeProgress(RUN);
    expect(record).toMatchObject({
      attempt: 2,
      saves: 1,
      firstAt: h.clock.now,
      samples: [{ at: h.clock.now, done: 1 }],
    });
  });

  it("starts the readings over when done goes back, and keeps them when done is unknown", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "compute" }));
    const save = (s: ProgressState) => {
      h.clock.now += 100;
      return saved(h.store.saveNodeProgress(fence, { path: "work", visit: 1, attempt: 1, state: s }));
    };
    save(state(4, 10));
    save(state(6, 10));
    expect(save(state(null, null, "thinking")).samples.map((s) => s.done)).toEqual([4, 6]);
    expect(save(state(2, 10)).samples.map((s) => s.done)).toEqual([2]);
  });

  it("is dropped when the visit finishes (also through an advance) and when the run ends", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.saveNodeProgress(fence, { path: "a", visit: 1, attempt: 1, state: state(1, 1) }));
    saved(
      h.store.advanceNodeVisit(fence, {
        finish: { path: "a", visit: 1, result: { status: "succeeded", output: 1, next: "b" } },
        start: { path: "b", visit: 1, nodeKind: "compute" },
      }),
    );
    expect(rawRows()).toEqual([]);
    saved(
      h.store.saveNodeProgress(fence, { path: "b", visit: 1, attempt: 1, state: state(null, null, "b") }),
    );
    expect(rawRows()).toEqual([{ path: "b", visit: 1 }]);
    saved(
      h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "stopped" } }),
    );
    expect(rawRows()).toEqual([]);
    expect(h.store.listNodeProgress(RUN)).toEqual([]);
  });

  it("keeps a run-wide report after its visit ends and while the run is parked, until a newer one or the run's end", () => {
    const fence = runningRun(h.store, RUN);
    const endsBy = h.clock.now + 3_600_000;
    const runWide = (done: number): ProgressState => ({
      ...state(done, 100, `check ${done}`),
      eta: endsBy,
      scope: "run",
    });
    saved(h.store.startNodeVisit(fence, { path: "decide", visit: 1, nodeKind: "compute" }));
    saved(h.store.saveNodeProgress(fence, { path: "decide", visit: 1, attempt: 1, state: runWide(1) }));
    saved(
      h.store.advanceNodeVisit(fence, {
        finish: { path: "decide", visit: 1, result: { status: "succeeded", output: 1, next: "pause" } },
        start: { path: "pause", visit: 1, nodeKind: "wait" },
      }),
    );
    // The visit ended: it has no step progress, the run keeps its report.
    expect(h.store.listNodeProgress(RUN)).toEqual([]);
    expect(h.store.readRunProgress(RUN)).toMatchObject({ path: "decide", visit: 1, state: runWide(1) });
    const until = h.clock.now + 60_000;
    saved(h.store.parkRun(fence, { code: "waiting", message: "waiting", path: "pause", visit: 1, until }));
    h.reopen();
    expect(h.store.getRun(RUN)?.status).toBe("parked");
    expect(h.store.readRunProgress(RUN)?.state).toEqual(runWide(1));

    const next = saved(h.store.claimRun({ runId: RUN, claimToken: "again", leaseMs: 30_000, resume: true }));
    const again = { runId: RUN, generation: next.command.generation, claimToken: "again" };
    saved(h.store.markRunning(again));
    saved(h.store.startNodeVisit(again, { path: "decide", visit: 2, nodeKind: "compute" }));
    h.clock.now += 1_000;
    saved(h.store.saveNodeProgress(again, { path: "decide", visit: 2, attempt: 1, state: runWide(2) }));
    // One run-wide report shows: the newer replaced the older.
    expect(rawRows()).toEqual([{ path: "decide", visit: 2 }]);
    expect(h.store.readRunProgress(RUN)).toMatchObject({ visit: 2, state: runWide(2) });
    saved(h.store.finishRun(again, { outcome: "completed", output: 1 }));
    expect(h.store.readRunProgress(RUN)).toBeNull();
    expect(rawRows()).toEqual([]);
  });

  it("refuses at the frame a state that breaks the rules", () => {
    const base = { path: "work", visit: 1, attempt: 1 };
    expectRefusedBySchema(nodeProgressReportSchema, { ...base, state: state(3, 2) });
    expectRefusedBySchema(nodeProgressReportSchema, { ...base, state: state(-1, null) });
    expectRefusedBySchema(nodeProgressReportSchema, { ...base, state: state(null, null, "x".repeat(201)) });
  });
});
