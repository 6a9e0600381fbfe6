import { describe, expect, it } from "vitest";
import { type EtaSample, estimateEta } from "../src/progress-eta.js";

/** Readings `stepMs` apart from t=1000, with the given `done` values. */
function readings(stepMs: number, ...done: number[]): EtaSample[] {
  return done.map((d, i) => ({ at: 1_000 + i * stepMs, done: d }));
}

describe("estimateEta", () => {
  it("has no ETA without a total, without readings, or without a rate", () => {
    expect(estimateEta(readings(1_000, 1, 2, 3), null)).toBeNull();
    expect(estimateEta([], 10)).toBeNull();
    expect(estimateEta(readings(1_000, 5), 10)).toBeNull();
    expect(estimateEta(readings(1_000, 5, 5, 5), 10)).toBeNull();
    expect(
      estimateEta(
        [
          { at: 1_000, done: 1 },
          { at: 1_000, done: 2 },
        ],
        10,
      ),
    ).toBeNull();
  });

  it("projects the rate since the first reading from the latest one", () => {
    // 10 per second; at t=4000 done is 40 of 100: 60 left, 6 s more (4 readings: not yet high).
    expect(estimateEta(readings(1_000, 10, 20, 30, 40), 100)).toEqual({ at: 10_000, confidence: "medium" });
  });

  it("is low with fewer than 3 readings or under 10% done", () => {
    // 10 per second; at t=2000, 80 left: 8 s more.
    expect(estimateEta(readings(1_000, 10, 20), 100)).toEqual({ at: 10_000, confidence: "low" });
    // 1 per second; 5 of 100 done at t=5000.
    expect(estimateEta(readings(1_000, 1, 2, 3, 4, 5), 100)).toEqual({ at: 100_000, confidence: "low" });
  });

  it("is medium while there are few readings or the rate changes, high once it is steady", () => {
    expect(estimateEta(readings(1_000, 10, 20, 30), 100)).toMatchObject({ confidence: "medium" });
    expect(estimateEta(readings(1_000, 10, 20, 30, 40, 50), 100)).toMatchObject({ confidence: "high" });
    // Slowing down: 10/s, then 2/s.
    expect(estimateEta(readings(1_000, 10, 20, 30, 32, 34), 100)).toMatchObject({ confidence: "medium" });
    // Within 25%: 10/s then 8/s.
    expect(estimateEta(readings(1_000, 10, 20, 30, 38, 46), 100)).toMatchObject({ confidence: "high" });
  });

  it("says done when done reached the total", () => {
    expect(estimateEta(readings(1_000, 10, 100), 100)).toEqual({ at: 2_000, confidence: "high" });
    expect(estimateEta(readings(1_000, 0), 0)).toEqual({ at: 1_000, confidence: "high" });
  });
});
