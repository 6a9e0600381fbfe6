import { describe, expect, it } from "vitest";
import { nextWorkerPhase, type WorkerEvent, type WorkerPhase } from "../src/live-worker.js";

function walk(events: WorkerEvent[]): WorkerPhase[] {
  let phase: WorkerPhase = { kind: "launching" };
  return events.map((event) => {
    phase = nextWorkerPhase(phase, event);
    return phase;
  });
}

describe("a live worker's phases", () => {
  it("goes launching -> running -> exiting -> gone, keeping the decision on its own report", () => {
    const phases = walk([{ type: "hello" }, { type: "reported", decision: "failed" }, { type: "gone" }]);
    expect(phases).toEqual([
      { kind: "running" },
      { kind: "exiting", decision: "failed", killTimer: null },
      { kind: "gone" },
    ]);
  });

  it("keeps the first kill timer of a cancel through its exit report, and ignores late events once gone", () => {
    const first = setTimeout(() => {}, 0);
    const second = setTimeout(() => {}, 0);
    clearTimeout(first);
    clearTimeout(second);
    const phases = walk([
      { type: "hello" },
      { type: "cancel", killTimer: first },
      { type: "cancel", killTimer: second },
      { type: "reported", decision: "none" },
      { type: "hello" },
      { type: "gone" },
      { type: "reported", decision: "relaunch" },
    ]);
    expect(phases.map((p) => p.kind)).toEqual([
      "running",
      "cancelling",
      "cancelling",
      "exiting",
      "exiting",
      "gone",
      "gone",
    ]);
    expect(phases[2]).toEqual({ kind: "cancelling", killTimer: first });
    expect(phases[3]).toEqual({ kind: "exiting", decision: "none", killTimer: first });
  });
});
