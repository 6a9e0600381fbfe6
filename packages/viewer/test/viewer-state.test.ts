import { visibleWidth } from "@earendil-works/pi-tui";
import type { RunSummary, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  initialState,
  reduceViewer,
  renderScreen,
  type ViewerAction,
  type ViewerKey,
  type ViewerRequest,
  type ViewerState,
  viewerKeyOf,
} from "../src/index.js";
import { event, historyOf } from "./history-fixture.js";
import { chainManifest, runViewOf, withNode } from "./run-view-fixture.js";

function run(actions: ViewerAction[], from: ViewerState = initialState()) {
  let state = from;
  const requests: ViewerRequest[] = [];
  for (const action of actions) {
    const step = reduceViewer(state, action);
    state = step.state;
    requests.push(...step.requests);
  }
  return { state, requests };
}
const key = (k: ViewerKey): ViewerAction => ({ type: "key", key: k });
const summary = (view: RunView): RunSummary => {
  const { nodes: _n, manifest: _m, ...rest } = view;
  return rest;
};

const runA = withNode(runViewOf(chainManifest(4), { runId: "a-1", createdAt: 2_000 }), "n1", {
  state: "running",
  visits: 1,
  attempt: 1,
  startedAt: 1_500,
});
const runB = runViewOf(chainManifest(2), {
  runId: "b-1",
  status: "parked",
  createdAt: 1_000,
  recoveryReason: { code: "paused", message: "paused by the user" },
});
const trace = historyOf("a-1", [
  event({ type: "run.queued", data: { command: "start" } }),
  event({ type: "run.running" }),
  event({ type: "node.started", path: "n0", visit: 1, data: { kind: "compute" } }),
  event({ type: "node.succeeded", path: "n0", visit: 1 }),
  event({ type: "node.started", path: "n1", visit: 1, data: { kind: "compute" } }),
]);

describe("reduceViewer", () => {
  it("lists runs newest first, filters them and opens the chosen one", () => {
    const { state, requests } = run([
      { type: "runs", runs: [summary(runB), summary(runA)] },
      key("filter"),
      key("filter"),
    ]);
    expect(state.runs.map((r) => r.runId)).toEqual(["a-1", "b-1"]);
    expect(state.filter).toBe("parked");
    const opened = run([key("enter")], state);
    expect(opened.state.screen).toBe("run");
    expect(opened.state.run?.runId).toBe("b-1");
    expect([...requests, ...opened.requests]).toEqual([{ type: "open", runId: "b-1" }]);
  });

  it("scrubs back two steps even before the history arrives, then snaps back to live", () => {
    const opened = run([{ type: "runs", runs: [summary(runA)] }, key("enter"), { type: "view", view: runA }]);
    const back = run([key("left"), key("left")], opened.state);
    expect(back.requests).toEqual([
      { type: "history", runId: "a-1" },
      { type: "history", runId: "a-1" },
    ]);
    expect(back.state.run?.replay).toBeNull();
    const arrived = run([{ type: "history", history: trace }], back.state);
    expect(arrived.state.run?.replay).toBe(2);
    const screen = renderScreen(arrived.state, { width: 80, height: 30, now: 5_000 });
    expect(screen[1]).toContain("◀ replay 3/5  node.started n0 #1");
    // The running node is timed at the replay point, not at the wall clock.
    expect(screen.join("\n")).toContain("▶ running #1 0ms");
    // Forward twice reaches the end of the timeline, which is live again.
    const forward = run([key("right"), key("right")], arrived.state);
    expect(forward.state.run?.replay).toBeNull();
    expect(renderScreen(forward.state, { width: 80, height: 30, now: 5_000 })[1]).toContain("● live");
  });

  it("moves the node selection, opens the inspector and backs out step by step", () => {
    const opened = run([{ type: "runs", runs: [summary(runA)] }, key("enter"), { type: "view", view: runA }]);
    const moved = run([key("down")], opened.state);
    expect(moved.state.run?.selected).toBe("n2");
    const inspecting = run([key("enter")], moved.state);
    expect(inspecting.state.run?.inspector).toBe(true);
    expect(inspecting.requests).toEqual([{ type: "history", runId: "a-1" }]);
    const closed = run([key("back")], inspecting.state);
    expect(closed.state.run?.inspector).toBe(false);
    const listed = run([key("back")], closed.state);
    expect(listed.state.screen).toBe("list");
    expect(listed.requests).toEqual([{ type: "close", runId: "a-1" }]);
    expect(run([key("quit")], listed.state).requests).toEqual([{ type: "quit" }]);
    const following = run([key("follow")], moved.state);
    expect(following.state.run?.selected).toBeNull();
  });

  it("reads the history again when the run moves on under an open inspector", () => {
    const opened = run(
      [
        { type: "view", view: runA },
        { type: "history", history: trace },
      ],
      initialState("a-1"),
    );
    const closedPush = run([{ type: "view", view: { ...runA, revision: 99 } }], opened.state);
    expect(closedPush.requests).toEqual([]);
    const inspecting = run([key("enter")], opened.state);
    const pushed = run([{ type: "view", view: { ...runA, revision: 99 } }], inspecting.state);
    expect(pushed.requests).toEqual([{ type: "history", runId: "a-1" }]);
    const same = run([{ type: "view", view: { ...runA, revision: trace.revision } }], inspecting.state);
    expect(same.requests).toEqual([]);
    // An older view answered late does not replace a newer one.
    const stale = run([{ type: "view", view: { ...runA, revision: 1, status: "queued" } }], pushed.state);
    expect(stale.state.run?.view?.revision).toBe(99);
  });

  it("keeps pushed views of other runs in the list and of the open run on screen", () => {
    const opened = run([key("enter")], initialState("a-1"));
    const pushed = run(
      [
        { type: "view", view: runB },
        { type: "view", view: runA },
      ],
      opened.state,
    );
    expect(pushed.state.runs.map((r) => r.runId).sort()).toEqual(["a-1", "b-1"]);
    expect(pushed.state.run?.view?.runId).toBe("a-1");
  });

  it("toggles help with ? and closes it with any key", () => {
    const shown = run([key("help")]);
    expect(shown.state.help).toBe(true);
    expect(renderScreen(shown.state, { width: 90, height: 24, now: 0 }).join("\n")).toContain(
      "replay: step back",
    );
    expect(run([key("down")], shown.state).state.help).toBe(false);
  });
});

describe("renderScreen", () => {
  it("says the terminal is too small instead of drawing", () => {
    const lines = renderScreen(initialState(), { width: 30, height: 6, now: 0 });
    expect(lines).toHaveLength(6);
    expect(lines.join(" ").replace(/ +/g, " ")).toContain(
      "terminal too small for the piw viewer: need 40×10, have 30×6. Enlarge the window, or press q to quit.",
    );
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(30);
    expect(renderScreen(initialState(), { width: 8, height: 3, now: 0 })).toHaveLength(3);
  });

  it("says when the host went away and when it is gone", () => {
    const lost = run([{ type: "connection", state: { kind: "reconnecting", message: "socket closed" } }]);
    expect(renderScreen(lost.state, { width: 80, height: 12, now: 0 })[1]).toBe(
      "host went away (socket closed); reconnecting…",
    );
    const gone = run([{ type: "connection", state: { kind: "unavailable", message: "no host" } }]);
    expect(renderScreen(gone.state, { width: 80, height: 12, now: 0 })[1]).toBe("host unavailable: no host");
  });

  it("fills exactly the terminal, never wider, at any size", () => {
    const opened = run([
      { type: "runs", runs: [summary(runA), summary(runB)] },
      key("enter"),
      { type: "view", view: runA },
    ]);
    for (const [width, height] of [
      [40, 10],
      [41, 11],
      [80, 24],
      [200, 60],
    ] as const) {
      for (const state of [initialState(), opened.state, run([key("enter")], opened.state).state]) {
        const lines = renderScreen(state, { width, height, now: 9_000 });
        expect(lines).toHaveLength(height);
        for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      }
    }
  });
});

describe("viewerKeyOf", () => {
  it("maps terminal input to viewer keys", () => {
    expect(viewerKeyOf("\u001b[D")).toBe("left");
    expect(viewerKeyOf("\u001b[C")).toBe("right");
    expect(viewerKeyOf("\r")).toBe("enter");
    expect(viewerKeyOf("\u001b")).toBe("back");
    expect(viewerKeyOf("?")).toBe("help");
    expect(viewerKeyOf("q")).toBe("quit");
    expect(viewerKeyOf("\u0003")).toBe("quit");
    expect(viewerKeyOf("\u001b[4~")).toBe("end");
    expect(viewerKeyOf("\u001bOF")).toBe("end");
    expect(viewerKeyOf("\u001b[1~")).toBe("home");
    expect(viewerKeyOf("z")).toBeUndefined();
  });
});

describe("the run list filtered by schedule", () => {
  const scheduled = (runId: string, scheduleId: string, createdAt: number): RunSummary =>
    summary(
      runViewOf(chainManifest(2), {
        runId,
        createdAt,
        status: "done",
        outcome: "completed",
        origin: { kind: "schedule", scheduleId, scheduledFor: createdAt },
      }),
    );

  it("shows only that schedule's runs, says so in the header, and moves only among them", () => {
    const runs = [
      scheduled("t-1", "tick", 3_000),
      summary(runA),
      scheduled("o-1", "other", 2_500),
      scheduled("t-2", "tick", 1_000),
    ];
    const { state } = run(
      [{ type: "runs", runs }, key("down"), key("down"), key("down")],
      initialState(undefined, "tick"),
    );
    const screen = renderScreen(state, { width: 100, height: 20, now: 5_000 }).map((line) => line.trimEnd());
    expect(screen.join("\n")).toContain("schedule tick");
    expect(screen.join("\n")).toContain("2 of 4");
    expect(screen.some((line) => line.includes("t-1"))).toBe(true);
    expect(screen.some((line) => line.includes("t-2"))).toBe(true);
    expect(screen.some((line) => line.includes("o-1") || line.includes("a-1"))).toBe(false);
    // Two rows: the cursor stops at the second.
    expect(state.listIndex).toBe(1);
  });
});
