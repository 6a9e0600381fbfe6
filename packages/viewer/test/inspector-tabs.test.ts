import type { GraphManifest, StepConversation } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  initialState,
  reduceViewer,
  renderScreen,
  screenTarget,
  splitShiftAt,
  UNICODE_GLYPHS,
  type ViewerAction,
  type ViewerState,
  viewerKeyOf,
} from "../src/index.js";
import { event, historyOf } from "./history-fixture.js";
import { manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

// The inspector's tabs, the playing replay and the mouse, through the reducer and the screen.

const manifest: GraphManifest = {
  version: 1,
  workflow: "ship",
  title: "Ship it",
  startPath: "plan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [manifestNode("plan", "agent"), manifestNode("ship", "shell")],
  mounts: [],
  edges: [
    { from: "plan", to: { kind: "node", path: "ship" } },
    { from: "ship", to: { kind: "exit", exit: "done" } },
  ],
};

const view = withNode(
  withNode(
    runViewOf(manifest, {
      runId: "ship-1",
      status: "done",
      outcome: "completed",
      startedAt: 1_000,
      finishedAt: 2_000,
      revision: 9,
      inputSummary: 'version: "2.0.0"',
      output: { kind: "json", value: { shipped: true } },
      parentRunId: "ship-0",
      originCommand: "restart",
      restartNumber: 1,
    }),
    "plan",
    { state: "succeeded", visits: 1, attempt: 1, startedAt: 1_100, finishedAt: 1_500 },
  ),
  "ship",
  { state: "succeeded", visits: 1, attempt: 1, startedAt: 1_600, finishedAt: 1_900 },
);

const events = [
  event({ type: "run.queued", path: null, visit: null, data: { command: "restart", parentRunId: "ship-0" } }),
  event({ type: "run.running", path: null, visit: null, data: null }),
  event({ type: "node.started", path: "plan", visit: 1, data: { kind: "agent" } }),
  event({ type: "node.succeeded", path: "plan", visit: 1, data: null }),
  event({ type: "node.started", path: "ship", visit: 1, data: { kind: "shell" } }),
  event({ type: "node.succeeded", path: "ship", visit: 1, data: null }),
  event({ type: "run.completed", path: null, visit: null, data: null }),
];
const history = historyOf("ship-1", events, {
  revision: 9,
  steps: [
    {
      path: "plan",
      visit: 1,
      attempt: 1,
      status: "succeeded",
      startedAt: 1_100,
      finishedAt: 1_500,
      errorCode: null,
      error: null,
      output: { plan: "tag" },
    },
  ],
});

const conversation: StepConversation = {
  runId: "ship-1",
  path: "plan",
  revision: 9,
  visits: [
    {
      visit: 1,
      attempt: 1,
      mode: "isolated",
      state: "settled",
      omitted: 0,
      entries: [
        { type: "prompt", text: "Plan the release." },
        { type: "text", text: "I will read the changelog." },
        { type: "tool_call", tool: "read", arguments: '{"path":"CHANGELOG.md"}' },
        { type: "tool_result", tool: "read", text: "## 2.0.0", isError: false },
        { type: "submit", output: '{"plan":"tag"}' },
        { type: "verdict", accepted: false, text: "output.plan must be one of: tag, branch" },
        { type: "submit", output: '{"plan":"tag"}' },
        { type: "verdict", accepted: true, text: "Accepted: workflow step plan is complete." },
      ],
    },
  ],
};

const key = (data: string): ViewerAction => {
  const k = viewerKeyOf(data);
  if (k === undefined) throw new Error(`no key for ${JSON.stringify(data)}`);
  return { type: "key", key: k };
};

function apply(state: ViewerState, actions: ViewerAction[]) {
  let s = state;
  const requests = [];
  for (const action of actions) {
    const step = reduceViewer(s, action);
    s = step.state;
    requests.push(...step.requests);
  }
  return { state: s, requests };
}

const opened = () =>
  apply(initialState("ship-1"), [
    { type: "view", view },
    { type: "history", history },
  ]).state;

const size = { width: 140, height: 30, now: 5_000, glyphs: UNICODE_GLYPHS };
const frame = (state: ViewerState) => renderScreen(state, size).join("\n");

describe("inspector tabs", () => {
  it("switches with 1 to 4 and tab, and draws the chosen tab's bar", () => {
    let state = opened();
    expect(state.run?.tab).toBe("steps");
    state = apply(state, [key("3")]).state;
    expect(state.run?.tab).toBe("trace");
    state = apply(state, [key("\t")]).state;
    expect(state.run?.tab).toBe("info");
    state = apply(state, [key("\t")]).state;
    expect(state.run?.tab).toBe("steps");
    expect(frame(state)).toContain(" 1 Steps │ 2 Conversation │ 3 Trace │ 4 Info ");
  });

  it("lists the trace, the chosen node's events or all, and marks the replay cursor", () => {
    let state = apply(opened(), [{ type: "choose", path: "ship" }, key("3")]).state;
    let text = frame(state);
    expect(text).toContain("events of ship");
    expect(text).toContain("node.started ship #1  kind=shell");
    expect(text).not.toContain("node.started plan #1");
    state = apply(state, [key("a")]).state;
    text = frame(state);
    expect(text).toContain("node.started plan #1  kind=agent");
    expect(text).toContain("run.queued  command=restart parentRunId=ship-0");
    // Three steps back from live the cursor sits on `node.started ship`, not on the last event.
    state = apply(state, [key("\u001b[D"), key("\u001b[D"), key("\u001b[D")]).state;
    expect(state.run?.replay).toBe(3);
    expect(frame(state)).toMatch(/› \+\S+ +node\.succeeded plan #1/);
  });

  it("shows the run's input summary, output, source and lineage in Info", () => {
    const text = frame(apply(opened(), [key("4")]).state);
    expect(text).toContain('version: "2.0.0"');
    expect(text).toContain('"shipped": true');
    expect(text).toContain("file      /w/ship.workflow.ts");
    expect(text).toContain("made by   restart #1");
    expect(text).toContain("parent    ship-0");
  });

  it("asks the host for the chosen step's conversation and draws its messages", () => {
    const { state, requests } = apply(opened(), [{ type: "choose", path: "plan" }, key("2")]);
    expect(requests).toContainEqual({ type: "conversation", runId: "ship-1", path: "plan" });
    expect(frame(state)).toContain("loading the conversation");
    const text = frame(apply(state, [{ type: "conversation", conversation }]).state);
    for (const line of [
      "visit 1, attempt 1  isolated session",
      "prompt",
      "Plan the release.",
      "model",
      "I will read the changelog.",
      "→ read",
      '{"path":"CHANGELOG.md"}',
      "← read",
      "submit",
      "✗ rejected",
      "output.plan must be one of: tag, branch",
      "✓ accepted",
    ])
      expect(text).toContain(line);
    // Choosing another node asks for that node's; a shell step has none.
    const other = apply(state, [{ type: "choose", path: "ship" }]);
    expect(other.requests).toContainEqual({ type: "conversation", runId: "ship-1", path: "ship" });
    expect(frame(other.state)).toContain("ship is not an agent step");
  });
});

describe("playing the replay", () => {
  it("plays from the first event at the chosen speed and stops at live", () => {
    let state = apply(opened(), [key("x"), key("x")]).state;
    expect(state.speed).toBe(5);
    state = apply(state, [key(" ")]).state;
    expect(state.run?.playing).toBe(true);
    expect(state.run?.replay).toBe(0);
    expect(frame(state)).toContain("playing 5×");
    state = apply(state, [{ type: "tick" }, { type: "tick" }]).state;
    expect(state.run?.replay).toBe(2);
    state = apply(state, [key("p")]).state;
    expect(state.run?.playing).toBe(false);
    expect(frame(state)).toContain("paused 5×");
    state = apply(state, [key("p"), ...Array.from({ length: 10 }, () => ({ type: "tick" }) as const)]).state;
    expect(state.run?.replay).toBeNull();
    expect(state.run?.playing).toBe(false);
    expect(apply(state, [key("x"), key("x")]).state.speed).toBe(1);
  });
});

describe("the mouse", () => {
  const at = (state: ViewerState, text: string) => {
    const lines = renderScreen(state, size);
    const y = lines.findIndex((line) => line.includes(text));
    return { x: (lines[y] ?? "").indexOf(text), y };
  };

  it("finds the card, the tab and the divider under the pointer", () => {
    const state = opened();
    const card = at(state, "$ ship");
    expect(screenTarget(state, size, card.x, card.y)).toEqual({ kind: "card", path: "ship" });
    const tab = at(state, "3 Trace");
    expect(screenTarget(state, size, tab.x, tab.y)).toEqual({ kind: "tab", tab: "trace" });
    const divider = (renderScreen(state, size)[3] ?? "").indexOf("│ ");
    expect(screenTarget(state, size, divider, 3).kind).toBe("divider");
  });

  it("moves the divider to where it is dragged", () => {
    const state = opened();
    const shift = splitShiftAt(state, size, 60);
    const moved = apply(state, [{ type: "split", shift }]).state;
    expect((renderScreen(moved, size)[3] ?? "").indexOf("│ ")).toBe(60);
  });

  it("scrolls the pane under the wheel, and that pane takes the keys", () => {
    let state = apply(opened(), [{ type: "scroll", pane: "inspector", delta: 3 }]).state;
    expect(state.run?.inspector).toBe(true);
    expect(state.run?.scroll).toBe(3);
    state = apply(state, [{ type: "scroll", pane: "graph", delta: -3 }]).state;
    expect(state.run?.inspector).toBe(false);
    expect(state.run?.scroll).toBe(-3);
  });
});
