import { visibleWidth } from "@earendil-works/pi-tui";
import type { GraphManifest, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  ASCII_GLYPHS,
  detectGlyphs,
  initialState,
  naturalGraphWidth,
  needsTick,
  reduceViewer,
  renderScreen,
  renderWidgetLines,
  splitGraphWidth,
  UNICODE_GLYPHS,
  type ViewerAction,
  type ViewerState,
  viewerKeyOf,
} from "../src/index.js";
import { expectGolden } from "./golden.js";
import { historyOf } from "./history-fixture.js";
import { manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

/** plan → check; check: ok → ship → done, retry → plan (a loop), give up → abandon → done. */
const manifest: GraphManifest = {
  version: 1,
  workflow: "release",
  title: "Ship a release",
  startPath: "plan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [
    manifestNode("plan", "agent"),
    manifestNode("check", "decision"),
    manifestNode("ship", "shell"),
    manifestNode("abandon", "notify"),
  ],
  mounts: [],
  edges: [
    { from: "plan", to: { kind: "node", path: "check" } },
    { from: "check", to: { kind: "node", path: "ship" }, label: "ok" },
    { from: "check", to: { kind: "node", path: "plan" }, label: "retry" },
    { from: "check", to: { kind: "node", path: "abandon" }, label: "give up" },
    { from: "ship", to: { kind: "exit", exit: "done" } },
    { from: "abandon", to: { kind: "exit", exit: "done" } },
  ],
};

const done = (path: string, visits: number, startedAt: number, finishedAt: number) => ({
  path,
  patch: { state: "succeeded" as const, visits, attempt: 1, startedAt, finishedAt },
});

function viewWith(
  patches: { path: string; patch: Partial<RunView["nodes"][number]> }[],
  over: Partial<RunView>,
) {
  let view = runViewOf(manifest, { runId: "rel-1", startedAt: 1_000, revision: 7, ...over });
  for (const { path, patch } of patches) view = withNode(view, path, patch);
  return view;
}

/** Planned twice, checked, now shipping: `abandon` was never reached. */
const shipping = viewWith(
  [
    done("plan", 2, 1_000, 4_000),
    done("check", 2, 4_000, 4_500),
    { path: "ship", patch: { state: "running", visits: 1, attempt: 1, startedAt: 5_000 } },
  ],
  {
    status: "running",
    currentWork: { kind: "worker", launchId: "l1", path: "ship" },
    cursor: { path: "ship", visit: 1 },
    inputSummary: 'version: "1.4.0"',
  },
);

const failed = viewWith(
  [
    done("plan", 1, 1_000, 2_000),
    done("check", 1, 2_000, 2_100),
    {
      path: "ship",
      patch: {
        state: "failed",
        visits: 1,
        attempt: 1,
        startedAt: 2_100,
        finishedAt: 3_000,
        errorCode: "shell_exit",
      },
    },
  ],
  {
    runId: "rel-2",
    status: "failed",
    outcome: "failed",
    finishedAt: 3_000,
    error: { code: "node_failed", message: "ship exited with code 2" },
    inputSummary: '{version: "1.3.9", notes: "the long list of every change since the last release"}',
  },
);

const history = historyOf("rel-1", [], {
  revision: 7,
  steps: [
    {
      path: "ship",
      visit: 1,
      attempt: 1,
      status: "running",
      startedAt: 5_000,
      finishedAt: null,
      errorCode: null,
      error: null,
      output: null,
    },
  ],
});

/** The run screen of `view`, opened from the list, with its history loaded. */
function opened(view: RunView, more: ViewerAction[] = []): ViewerState {
  let state = initialState(view.runId);
  const actions: ViewerAction[] = [
    { type: "view", view },
    {
      type: "history",
      history: { ...history, runId: view.runId, steps: view === shipping ? history.steps : [] },
    },
    ...more,
  ];
  for (const action of actions) state = reduceViewer(state, action).state;
  return state;
}

const frame = (state: ViewerState, width: number, height: number, now: number, ascii = false) =>
  renderScreen(state, { width, height, now, glyphs: ascii ? ASCII_GLYPHS : UNICODE_GLYPHS });

describe("viewer golden frames", () => {
  it("splits a wide terminal: the graph on the left, the chosen node's inspector on the right", () => {
    const lines = frame(opened(shipping), 140, 30, 8_000);
    expect(lines.every((line) => visibleWidth(line) <= 140)).toBe(true);
    // The graph gets what it needs, the inspector the rest.
    const natural = naturalGraphWidth(shipping, { now: 8_000, glyphs: UNICODE_GLYPHS });
    const left = splitGraphWidth(140, 0, natural);
    expect(left).toBe(natural + 1);
    expect(left).toBeLessThan(63);
    // Every body row has the divider in the same column; the inspector starts beside it.
    for (const line of lines.slice(2, -1)) expect(line.slice(left, left + 3)).toBe(" │ ");
    // The inspector's first row is its tab bar; the chosen node follows under it.
    expect(lines[2]?.slice(left + 3)).toBe(" 1 Steps │ 2 Conversation │ 3 Trace │ 4 Info ");
    expect(lines[3]?.slice(left + 3)).toBe("$ ship  shell");
    expectGolden("split-wide", lines);
  });

  it("moves the divider with < and >, within bounds", () => {
    const key = (data: string): ViewerAction => {
      const k = viewerKeyOf(data);
      if (k === undefined) throw new Error(`no key for ${data}`);
      return { type: "key", key: k };
    };
    const divider = (state: ViewerState) => (frame(state, 140, 30, 8_000)[3] ?? "").indexOf(" │ $ ship");
    const base = divider(opened(shipping));
    expect(divider(opened(shipping, [key(">")]))).toBe(base + 4);
    expect(divider(opened(shipping, [key(">"), key(">"), key(">"), key("<")]))).toBe(base + 8);
    // Far past the left edge, the graph keeps its minimum.
    const squeezed = opened(
      shipping,
      Array.from({ length: 30 }, () => key("<")),
    );
    expect(divider(squeezed)).toBe(32);
    expectGolden("split-narrowed", frame(squeezed, 140, 30, 8_000));
  });

  it("falls back to one column below 100 columns", () => {
    const lines = frame(opened(shipping), 80, 30, 8_000);
    expect(lines.join("\n")).not.toContain("$ ship  shell");
    expectGolden("narrow", lines);
  });

  it("draws in ASCII when asked", () => {
    const lines = frame(opened(shipping), 140, 30, 8_000, true);
    expect(lines.every((line) => /^[\x20-\x7e]*$/.test(line))).toBe(true);
    expectGolden("ascii-wide", lines);
    const list = frame(
      reduceViewer(initialState(), { type: "runs", runs: [shipping, failed] }).state,
      100,
      12,
      8_000,
      true,
    );
    expect(list.every((line) => /^[\x20-\x7e]*$/.test(line))).toBe(true);
    expectGolden("ascii-list", list);
    // The Pi widget draws from the same table.
    const widget = renderWidgetLines(shipping, { width: 60, now: 8_000, glyphs: ASCII_GLYPHS });
    expect(widget).toEqual([
      " v * plan     #2  3.0s",
      " v ? check    #2  500ms",
      ">> $ ship     #1  running 3.0s",
      " . m abandon",
    ]);
  });

  it("puts a failed run's error in the header and does not call it live", () => {
    const lines = frame(opened(failed), 120, 24, 60_000);
    expect(lines[0]).toContain("✗ failed · 2.0s · node_failed: ship exited with code 2");
    expect(lines[1]).not.toContain("live");
    expectGolden("failed-header", lines);
  });

  it("ticks a running node's elapsed time with the clock, between pushes", () => {
    const state = opened(shipping);
    const at = (now: number) => frame(state, 140, 30, now);
    expect(at(8_000).join("\n")).toContain("▶ running #1 3.0s");
    expect(at(9_000).join("\n")).toContain("▶ running #1 4.0s");
    expect(at(9_000).join("\n")).toContain("4.0s so far");
    expectGolden("elapsed-9s", at(9_000));
    // The redraw timer runs only while something runs, and not over a replay.
    expect(needsTick(state)).toBe(true);
    expect(needsTick(opened(failed))).toBe(false);
  });

  it("draws the path the run took and leaves the edges it never took hollow", () => {
    const lines = frame(opened(shipping), 80, 48, 8_000);
    const row = (text: string) => lines.findIndex((line) => line.includes(text));
    // plan → check and check → ship were taken: solid arrowheads above both cards.
    expect(lines[row("◇ check") - 2]).toMatch(/^ [│ ] +▼$/);
    expect(lines[row("$ ship") - 2]).toMatch(/^ +▼ +│$/);
    // check → abandon, abandon → done and ship → done were not: hollow ones.
    expect(lines[row("✉ abandon")]).toContain("◁╯");
    expect(lines[row("◎ done") - 2]).toMatch(/^ +▽ +│$/);
    expect(lines[row("◎ done")]).toContain("◁──╯");
    expectGolden("path-taken", lines);
  });

  it("says what esc does on every screen in the help", () => {
    const help = frame(opened(shipping, [{ type: "key", key: "help" }]), 120, 30, 8_000).join("\n");
    for (const where of ["list", "run", "inspector", "help"])
      expect(help).toMatch(new RegExp(`esc.* ${where} +\\S`));
  });
});

describe("detectGlyphs", () => {
  it("forces ASCII with PIW_ASCII=1, and picks it for a non-UTF-8 locale or the Linux console", () => {
    expect(detectGlyphs({ PIW_ASCII: "1", LANG: "en_US.UTF-8" })).toBe(ASCII_GLYPHS);
    expect(detectGlyphs({ PIW_ASCII: "0", TERM: "linux" })).toBe(UNICODE_GLYPHS);
    expect(detectGlyphs({ LANG: "C" })).toBe(ASCII_GLYPHS);
    expect(detectGlyphs({ LC_ALL: "POSIX", LANG: "en_US.UTF-8" })).toBe(ASCII_GLYPHS);
    expect(detectGlyphs({ LC_ALL: "de_DE.utf8" })).toBe(UNICODE_GLYPHS);
    expect(detectGlyphs({ TERM: "linux", LANG: "en_US.UTF-8" })).toBe(ASCII_GLYPHS);
    expect(detectGlyphs({ TERM: "xterm-256color", LANG: "en_US.UTF-8" })).toBe(UNICODE_GLYPHS);
  });

  it("keeps every glyph one column wide in both sets, so the layout is the same", () => {
    for (const g of [UNICODE_GLYPHS, ASCII_GLYPHS]) {
      const all = [
        ...Object.values(g.run),
        ...Object.values(g.node),
        ...Object.values(g.kind),
        ...Object.values(g.light),
        ...Object.values(g.heavy),
        ...Object.values(g.arrows),
        ...Object.values(g.untakenArrows),
        g.exit,
        g.divider,
        g.chosen,
      ];
      for (const glyph of all) expect([glyph, visibleWidth(glyph)]).toEqual([glyph, 1]);
    }
  });
});
