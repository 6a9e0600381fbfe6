import { AGENT_ACTIVITY_MAX, type AgentProgress } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { AgentProgressBoard } from "../src/agent-progress-board.js";

const fact = (path: string, seq: number, visit = 1): AgentProgress => ({
  path,
  visit,
  attempt: 1,
  seq,
  toolCalls: seq,
  kind: "tool",
  text: `read ${path}`,
});

describe("the host's board of agent progress", () => {
  it("keeps one entry per open visit, the latest fact of each, and the run's latest apart", () => {
    const board = new AgentProgressBoard();
    board.set("r", fact("fan/a/a", 1), "l1");
    board.set("r", fact("fan/b/b", 2), "l1");
    board.set("r", fact("fan/a/a", 3), "l1");
    expect(board.activity("r").map((p) => [p.path, p.seq])).toEqual([
      ["fan/b/b", 2],
      ["fan/a/a", 3],
    ]);
    board.finishVisit("r", "fan/a/a", 1);
    expect(board.activity("r").map((p) => p.path)).toEqual(["fan/b/b"]);
    // The run's latest fact outlives its visit.
    expect(board.get("r")?.seq).toBe(3);
    board.endRun("r");
    expect(board.activity("r")).toEqual([]);
    expect(board.get("r")?.seq).toBe(3);
  });

  it("drops the visits a gone worker reported, and keeps at most AGENT_ACTIVITY_MAX a run", () => {
    const board = new AgentProgressBoard();
    board.set("r", fact("fan/a/a", 1), "old");
    board.set("r", fact("fan/b/b", 2), "new");
    board.dropLaunch("r", "old");
    expect(board.activity("r").map((p) => p.path)).toEqual(["fan/b/b"]);
    for (let i = 0; i < AGENT_ACTIVITY_MAX + 5; i += 1) board.set("s", fact(`fan/n${i}/n${i}`, i + 1), "l");
    const open = board.activity("s");
    expect(open).toHaveLength(AGENT_ACTIVITY_MAX);
    expect(open[0]?.path).toBe("fan/n5/n5");
  });
});
