import type { RecoveryReason } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { recoveryWords, renderRunTable, renderWidgetLines } from "../src/index.js";
import { chainManifest, runViewOf } from "./run-view-fixture.js";

// A run parked on the clock says what it waits for in the same words on every surface.

const AT = Date.UTC(2026, 11, 1, 18, 30, 5);
const waiting: RecoveryReason = { code: "waiting", message: "w", path: "n0", visit: 1, until: AT };
const retrying: RecoveryReason = {
  code: "retry_waiting",
  message: "r",
  path: "n0",
  visit: 1,
  attempt: 2,
  attempts: 5,
  at: AT,
  lastError: "node_timed_out",
};

describe("clock words", () => {
  it("names the due time of a wait and the next attempt of a retry", () => {
    expect(recoveryWords(waiting)).toBe("waiting until 2026-12-01 18:30:05 UTC");
    expect(recoveryWords(retrying)).toBe("attempt 2 of 5 at 2026-12-01 18:30:05 UTC (after node_timed_out)");
    expect(recoveryWords({ code: "paused", message: "Paused by request." })).toBe(
      "Paused by request. (paused)",
    );
  });

  it("are what the run list and the widget show", () => {
    for (const reason of [waiting, retrying]) {
      const view = runViewOf(chainManifest(1), {
        status: "parked",
        startedAt: 1_000,
        recoveryReason: reason,
      });
      const words = recoveryWords(reason);
      expect(renderRunTable([view], { width: 200, now: 61_000 }).at(-1)).toContain(words);
      expect(renderWidgetLines(view, { width: 200 }).join("\n")).toContain(`parked: ${words}`);
    }
  });
});
