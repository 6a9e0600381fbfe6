import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AgentProgressBoard } from "../src/agent-progress-board.js";
import { LIVE_PUSH_INTERVAL_MS, LiveTranscripts } from "../src/live-transcripts.js";

const transcript = (text: string) => ({ entries: [{ role: "assistant" as const, text }], omitted: 0 });
const at = (path: string, visit = 1) => ({ path, visit, attempt: 1 });

describe("the host's live transcripts", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("asks for at most one view push per interval and run, the latest report waiting out the rest", () => {
    const pushed: string[] = [];
    const live = new LiveTranscripts(
      (runId) => pushed.push(runId),
      () => Date.now(),
    );
    live.set("r", at("a"), transcript("1"), "l1");
    expect(pushed).toEqual(["r"]);
    // A fast stream: 50 reports within one interval make one more push, after it.
    for (let i = 2; i < 52; i += 1) live.set("r", at("a"), transcript(String(i)), "l1");
    live.set("other", at("a"), transcript("x"), "l2");
    expect(pushed).toEqual(["r", "other"]);
    vi.advanceTimersByTime(LIVE_PUSH_INTERVAL_MS - 1);
    expect(pushed).toEqual(["r", "other"]);
    vi.advanceTimersByTime(1);
    expect(pushed).toEqual(["r", "other", "r"]);
    // What a push reads is the latest report.
    expect(live.get("r", "a", 1)?.live.entries[0]).toEqual({ role: "assistant", text: "51" });
    expect(live.seq("r")).toBe(51);
    // Over ten seconds of reports every millisecond: about ten pushes a second, never more.
    for (let ms = 0; ms < 10_000; ms += 1) {
      live.set("r", at("a"), transcript(`t${ms}`), "l1");
      vi.advanceTimersByTime(1);
    }
    const pushesOfR = pushed.filter((runId) => runId === "r").length;
    expect(pushesOfR).toBeLessThanOrEqual(2 + 10_000 / LIVE_PUSH_INTERVAL_MS);
    expect(pushesOfR).toBeGreaterThanOrEqual(10_000 / LIVE_PUSH_INTERVAL_MS - 1);
  });

  it("keeps one transcript per open visit and forgets it with its visit, its run or its reporter", () => {
    const pushed: string[] = [];
    const board = new AgentProgressBoard((runId) => pushed.push(runId));
    board.live.set("r", at("fan/a"), transcript("a"), "l1");
    board.live.set("r", at("fan/b"), transcript("b"), "session:s1");
    board.live.set("r", { path: "fan/c", visit: 2, attempt: 3 }, transcript("c"), "l1");
    expect(board.live.get("r", "fan/c", 2)?.attempt).toBe(3);
    board.finishVisit("r", "fan/a", 1);
    expect(board.live.get("r", "fan/a", 1)).toBeUndefined();
    board.dropLaunch("r", "l1");
    expect(board.live.get("r", "fan/c", 2)).toBeUndefined();
    expect(board.live.get("r", "fan/b", 1)?.live.entries).toEqual([{ role: "assistant", text: "b" }]);
    board.live.dropOwner("r", "session:s1");
    expect(board.live.get("r", "fan/b", 1)).toBeUndefined();
    board.live.set("r", at("fan/d"), transcript("d"), "l2");
    board.endRun("r");
    expect(board.live.get("r", "fan/d", 1)).toBeUndefined();
    // The sequence a view carries keeps growing: a viewer never mistakes a new report for an old one.
    expect(board.live.seq("r")).toBe(4);
    expect(board.live.seq("unknown")).toBe(0);
  });
});
