import { describe, expect, it } from "vitest";
import { checkTiming, chooseFiring, jitterFor, nextTimeAfter } from "../src/schedule-timing.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const berlin = (expression: string) => ({ kind: "cron" as const, expression, timeZone: "Europe/Berlin" });

describe("schedule timing", () => {
  it("fires a 02:30 Berlin cron once on the spring-forward day, at the first minute after the gap", () => {
    const timing = berlin("30 2 * * *");
    const first = nextTimeAfter(timing, 0, at("2026-03-28T12:00:00Z"));
    // 2026-03-29: clocks jump from 02:00 to 03:00 CEST; 02:30 does not exist.
    expect(iso(first)).toBe("2026-03-29T01:00:00.000Z");
    expect(iso(nextTimeAfter(timing, 0, first ?? 0))).toBe("2026-03-30T00:30:00.000Z");
    // The day before, 02:30 CET.
    expect(iso(nextTimeAfter(timing, 0, at("2026-03-27T12:00:00Z")))).toBe("2026-03-28T01:30:00.000Z");
  });

  it("fires a 02:30 Berlin cron once on the fall-back day, though 02:30 happens twice", () => {
    const timing = berlin("30 2 * * *");
    const first = nextTimeAfter(timing, 0, at("2026-10-24T12:00:00Z"));
    expect(iso(first)).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(nextTimeAfter(timing, 0, first ?? 0))).toBe("2026-10-26T01:30:00.000Z");
  });

  it("reads weekday cron times in the schedule's zone, UTC without one", () => {
    // Friday 2026-12-04 09:00 Berlin has passed: the next is Monday 09:00 CET.
    expect(iso(nextTimeAfter(berlin("0 9 * * 1-5"), 0, at("2026-12-04T08:00:00Z")))).toBe(
      "2026-12-07T08:00:00.000Z",
    );
    expect(iso(nextTimeAfter({ kind: "cron", expression: "0 9 * * *" }, 0, at("2026-12-04T08:00:00Z")))).toBe(
      "2026-12-04T09:00:00.000Z",
    );
  });

  it("counts every-times from the anchor", () => {
    const timing = { kind: "every" as const, everyMs: 30_000 };
    expect(nextTimeAfter(timing, 1_000, 1_000)).toBe(31_000);
    expect(nextTimeAfter(timing, 1_000, 31_000)).toBe(61_000);
    expect(nextTimeAfter(timing, 1_000, 45_000)).toBe(61_000);
  });

  it("refuses an unreadable cron and an unknown zone without echoing them", () => {
    const bad = checkTiming({ kind: "cron", expression: "every tuesday secret-token" });
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).not.toContain("secret-token");
    expect(checkTiming({ kind: "cron", expression: "* * * * *", timeZone: "Mars/Olympus" }).ok).toBe(false);
    expect(checkTiming({ kind: "cron", expression: "0 9 * * 1-5", timeZone: "Europe/Berlin" }).ok).toBe(true);
  });

  it("gives each time a fixed jitter within the bound", () => {
    expect(jitterFor("s", 1_000, 0)).toBe(0);
    const jitter = jitterFor("s", 1_000, 30_000);
    expect(jitter).toBe(jitterFor("s", 1_000, 30_000));
    expect(jitter).toBeGreaterThanOrEqual(0);
    expect(jitter).toBeLessThanOrEqual(30_000);
  });

  it("chooses the firing a catch-up policy makes up after the host was down", () => {
    const spec = (catchUp: "none" | "latest" | "all") => ({
      timing: { kind: "every" as const, everyMs: 60_000 },
      anchorAt: 0,
      catchUp,
      windowMs: 10 * 60_000,
    });
    // Due since minute 1; the host is back at minute 30 plus 5 s.
    const now = 30 * 60_000 + 5_000;
    expect(chooseFiring(spec("latest"), 60_000, now)).toEqual({ kind: "fire", scheduledFor: 30 * 60_000 });
    // `all` starts at the oldest time within the window (minute 20 plus 5 s, so minute 21).
    expect(chooseFiring(spec("all"), 60_000, now)).toEqual({ kind: "fire", scheduledFor: 21 * 60_000 });
    // `none`: minute 30 is 5 s late, on time.
    expect(chooseFiring(spec("none"), 60_000, now)).toEqual({ kind: "fire", scheduledFor: 30 * 60_000 });
    // Back at minute 30 and 50 s under `none` with a 2 h interval: the one due time was missed.
    const sparse = { ...spec("none"), timing: { kind: "every" as const, everyMs: 2 * 3_600_000 } };
    expect(chooseFiring(sparse, 0, 2 * 3_600_000 + 90_000)).toEqual({
      kind: "missed",
      resumeAfter: 2 * 3_600_000 + 90_000,
    });
  });
});
