import type { Fence } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildRunView } from "../src/build-run-view.js";
import { readRunHistoryView } from "../src/run-history.js";
import { runningRun, type StoreFile, saved, storeFile } from "./store-file.js";

// The run's view and its history, read from one real store file: a visit left open when the run
// stopped must be shown the same way by both.

const RUN = "open-visit-1";
const noWorkers = { acceptedWorker: () => undefined };

let file: StoreFile;
let store: RunStore;
beforeEach(() => {
  file = storeFile("piw-open-visit-");
  store = file.store;
});
afterEach(() => file.cleanup());

/** A running run with two branches side by side: `fan/quick` failed, `fan/slow` still open. */
function forkWithOpenBranch(): Fence {
  const fence = runningRun(store, RUN, { workflowName: "fork" });
  for (const path of ["fan/quick/quick", "fan/slow/slow"]) {
    saved(store.startNodeVisit(fence, { path, visit: 1, nodeKind: "compute" }));
  }
  saved(
    store.finishNodeVisit(fence, {
      path: "fan/quick/quick",
      visit: 1,
      result: { status: "failed", error: { code: "node_failed", message: "Compute node threw an Error." } },
    }),
  );
  return fence;
}

/** Each visited node's state in the view, and each saved visit's status in the history. */
function bothSides(): { view: Record<string, string>; history: Record<string, string> } {
  const view = buildRunView(store, RUN, noWorkers);
  const history = readRunHistoryView(store, RUN);
  if (view === null || history === null) throw new Error("the run is gone");
  return {
    view: Object.fromEntries(view.nodes.filter((n) => n.visits > 0).map((n) => [n.path, n.state])),
    history: Object.fromEntries(history.steps.map((s) => [s.path, s.status])),
  };
}

describe("a visit left open when its run stopped", () => {
  it("is pending in both the view and the history of a failed run", () => {
    const fence = forkWithOpenBranch();
    saved(
      store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "fan failed" } }),
    );
    expect(store.getRun(RUN)?.status).toBe("failed");
    const { view, history } = bothSides();
    expect(history).toEqual({ "fan/quick/quick": "failed", "fan/slow/slow": "pending" });
    expect(view).toEqual(history);
  });

  it.each([
    ["a run that timed out", "timed_out"],
    ["a run parked after losing its worker", "pending"],
    ["a paused run", "paused"],
    ["a cancelled run", "cancelled"],
  ] as const)("is shown alike by both for %s", (what, state) => {
    const fence = forkWithOpenBranch();
    if (what === "a run that timed out") {
      saved(
        store.finishRun(fence, {
          outcome: "timed_out",
          error: { code: "node_timed_out", message: "fan ran out of time" },
        }),
      );
    } else if (what === "a paused run") {
      saved(store.parkRun(fence, { code: "paused", message: "Paused by the user." }));
    } else if (what === "a cancelled run") {
      saved(store.cancelRun({ runId: RUN }));
    } else {
      saved(
        store.parkRun(fence, {
          code: "agent_turns_lost",
          message: "The turns were lost.",
          path: "fan/slow/slow",
        }),
      );
    }
    const { view, history } = bothSides();
    expect(history["fan/slow/slow"]).toBe(state);
    expect(view).toEqual(history);
  });

  it("is running in the history while the run is", () => {
    forkWithOpenBranch();
    // The store alone cannot see a worker: the history says running, the view (no worker) pending.
    expect(bothSides().history["fan/slow/slow"]).toBe("running");
  });
});
