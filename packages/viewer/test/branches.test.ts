import { visibleWidth } from "@earendil-works/pi-tui";
import type { NodeProgress, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  ASCII_GLYPHS,
  initialState,
  layoutGraph,
  reduceViewer,
  renderFooterStatus,
  renderGraph,
  renderInspector,
  renderScreen,
  renderSnapshot,
  renderWidgetLines,
  UNICODE_GLYPHS,
} from "../src/index.js";
import { forkManifest, forkView, wideForkView } from "./fork-fixture.js";
import { expectGolden } from "./golden.js";
import { withNode } from "./run-view-fixture.js";

const NOW = 65_000;
const g = UNICODE_GLYPHS;

const testing = (confidence: "low" | "medium" | "high"): NodeProgress => ({
  path: "review/test/integration",
  visit: 1,
  done: 3,
  total: 10,
  message: "running the api suite",
  updatedAt: 60_000,
  eta: { at: NOW + 2 * 60_000, confidence },
});

const docsAgent = {
  path: "review/docs/check",
  visit: 1,
  attempt: 1,
  seq: 5,
  toolCalls: 4,
  kind: "tool" as const,
  text: "read docs/viewer.md",
};

const midRun = () => forkView([testing("medium")], { agentProgress: docsAgent });

/** The row of the graph where `text` first appears. */
function rowOf(lines: string[], text: string): number {
  return lines.findIndex((line) => line.includes(text));
}

describe("a parallel node in the graph", () => {
  it("draws its branches side by side, split under the fork and joined above what follows", () => {
    const lines = renderSnapshot(midRun(), { width: 100, now: NOW, glyphs: g });
    expectGolden("branches-wide", lines);
    // The three branches' first cards sit on one row, left to right in the manifest's order.
    const banners = rowOf(lines, "─ lint ─");
    const row = lines[banners] ?? "";
    expect(row.indexOf("─ lint ─")).toBeLessThan(row.indexOf("─ test ─"));
    expect(row.indexOf("─ test ─")).toBeLessThan(row.indexOf("─ docs ─"));
    // test's three cards run down its own column, under its banner.
    const column = row.indexOf("─ test ─");
    for (const name of ["unit", "integration", "report"]) {
      const at = rowOf(lines, `$ ${name}`) >= 0 ? rowOf(lines, `$ ${name}`) : rowOf(lines, `λ ${name}`);
      expect(at).toBeGreaterThan(banners);
      expect(Math.abs((lines[at] ?? "").indexOf(name) - column)).toBeLessThan(8);
    }
    // The split line is just above the columns' arrowheads; the join line below the longest column.
    expect(lines[banners - 2]).toMatch(/╭─+┼─+╮/);
    const report = rowOf(lines, "λ report");
    const join = lines.findIndex((line, i) => i > report && /╰─+┼─+╯/.test(line));
    expect(join).toBe(report + 3);
    expect(lines[join + 1]?.trim()).toBe("▽");
    expect(rowOf(lines, "λ summarize")).toBe(join + 3);
    // The running step's card carries its progress and the docs agent's latest tool call.
    expect(lines[rowOf(lines, "$ integration") + 2]).toContain("3/10 · ~2 min left");
    expect(lines[rowOf(lines, "✦ check") + 2]).toContain("→ read docs/viewer");
  });

  it("lays out the same way every time, with each column's cards stacked from one top", () => {
    const view = midRun();
    const first = layoutGraph(view.manifest, view.nodes);
    expect(layoutGraph(view.manifest, view.nodes)).toEqual(first);
    const top = (id: string) => first.cards.find((card) => card.id === id)?.top ?? -1;
    expect(top("review/lint/run")).toBe(top("review/test/unit"));
    expect(top("review/docs/check")).toBe(top("review/test/unit"));
    expect(top("review/test/integration")).toBeGreaterThan(top("review/test/unit"));
    const [band] = first.bands;
    expect(band?.columns.map((column) => column.name)).toEqual(["lint", "test", "docs"]);
    expect(band?.columns[1]?.cards).toHaveLength(3);
    expect(first.cards[band?.next ?? -1]?.id).toBe("summarize");
    expect(top("summarize")).toBe((band?.mergeRow ?? 0) + 2);
    // The fork's edge after the join is drawn from the join, not through a gutter.
    expect(first.rightLanes).toBe(0);
    expect(first.leftLanes).toBe(0);
    expect(renderGraph(view, { width: 90, now: NOW, glyphs: g }).lines).toEqual(
      renderGraph(view, { width: 90, now: NOW, glyphs: g }).lines,
    );
  });

  it("draws in ASCII on a terminal that cannot show box drawing", () => {
    expectGolden(
      "branches-ascii",
      renderGraph(midRun(), { width: 72, now: NOW, glyphs: ASCII_GLYPHS }).lines,
    );
  });

  it("fits a narrow terminal: every row cut to the width, none wrapped", () => {
    for (const width of [24, 32, 40, 56]) {
      const drawn = renderGraph(midRun(), { width, now: NOW, glyphs: g });
      expect(drawn.lines).toHaveLength(drawn.height);
      for (const line of drawn.lines) expect(visibleWidth(line)).toBeLessThanOrEqual(Math.max(width, 24));
    }
  });

  it("keeps as many columns as fit and counts the other branches in one box", () => {
    const lines = renderGraph(wideForkView(9, 3), { width: 60, now: NOW, glyphs: g }).lines;
    expectGolden("branches-capped", lines);
    const banners = lines[rowOf(lines, "─ b0 ─")] ?? "";
    expect(banners).toContain("─ b2 ─");
    expect(banners).not.toContain("─ b3 ─");
    expect(lines.some((line) => line.includes("+6 more"))).toBe(true);
    expect(lines.some((line) => line.includes("6 pending"))).toBe(true);
    // A running branch keeps its column even when it comes last.
    let view = wideForkView(9, 0);
    view = withNode(view, "fan/b8/work", { state: "running", visits: 1, attempt: 1, startedAt: 1_000 });
    const capped = renderGraph(view, { width: 60, now: NOW, glyphs: g }).lines;
    const row = capped[rowOf(capped, "─ b0 ─")] ?? "";
    expect(row).toContain("─ b8 ─");
    expect(capped.some((line) => line.includes("+6 more"))).toBe(true);
  });
});

describe("a parallel node inside a branch", () => {
  // review's test branch runs its own parallel node `suites` with branches a and b.
  const nested = {
    ...forkManifest,
    nodes: [
      ...forkManifest.nodes.filter((n) => n.path !== "review/test/integration"),
      {
        path: "review/test/suites",
        name: "suites",
        scope: "review/test",
        kind: "parallel" as const,
        title: "suites",
      },
      {
        path: "review/test/suites/a/run",
        name: "run",
        scope: "review/test/suites/a",
        kind: "shell" as const,
        title: "run",
      },
      {
        path: "review/test/suites/b/run",
        name: "run",
        scope: "review/test/suites/b",
        kind: "shell" as const,
        title: "run",
      },
    ],
    edges: [
      ...forkManifest.edges.filter(
        (e) => e.from !== "review/test/unit" && e.from !== "review/test/integration",
      ),
      { from: "review/test/unit", to: { kind: "node" as const, path: "review/test/suites" } },
      { from: "review/test/suites", to: { kind: "node" as const, path: "review/test/report" } },
      { from: "review/test/suites/a/run", to: { kind: "join" as const, path: "review/test/suites" } },
      { from: "review/test/suites/b/run", to: { kind: "join" as const, path: "review/test/suites" } },
    ],
    forks: [
      ...(forkManifest.forks ?? []),
      {
        path: "review/test/suites",
        join: { kind: "all" as const },
        concurrency: null,
        branches: [
          { name: "a", title: "a", startPath: "review/test/suites/a/run" },
          { name: "b", title: "b", startPath: "review/test/suites/b/run" },
        ],
      },
    ],
  };

  it("stacks the inner branches' nodes in the outer branch's column, in flow order", () => {
    const view = withNode(
      withNode(forkView(), "review/test/suites/b/run", {
        state: "running",
        visits: 1,
        attempt: 1,
        startedAt: 5_000,
      }),
      "review/test/suites",
      { state: "running", visits: 1, attempt: 1, startedAt: 5_000 },
    );
    const shown = {
      ...view,
      manifest: nested,
      nodes: view.nodes.filter((n) => n.path !== "review/test/integration"),
    };
    const withInner = [
      ...shown.nodes,
      ...["review/test/suites", "review/test/suites/a/run", "review/test/suites/b/run"]
        .filter((path) => !shown.nodes.some((n) => n.path === path))
        .map((path) => ({
          ...(shown.nodes[0] as RunView["nodes"][number]),
          path,
          kind: "shell" as const,
          state: "pending" as const,
          visits: 0,
          attempt: 0,
          startedAt: null,
          finishedAt: null,
        })),
    ];
    const layout = layoutGraph(nested, withInner);
    const test = layout.bands[0]?.columns[1]?.cards.map((card) => layout.cards[card]?.id);
    expect(test).toEqual([
      "review/test/unit",
      "review/test/suites",
      "review/test/suites/a/run",
      "review/test/suites/b/run",
      "review/test/report",
    ]);
    expect(layout.bands).toHaveLength(1);
    // The widget still gives the outer branch one line.
    const lines = renderWidgetLines({ ...shown, nodes: withInner }, { width: 80, now: NOW, glyphs: g });
    expect(lines.filter((line) => line.includes("├") || line.includes("└"))).toHaveLength(3);
    for (const line of renderGraph({ ...shown, nodes: withInner }, { width: 60, now: NOW, glyphs: g }).lines)
      expect(visibleWidth(line)).toBeLessThanOrEqual(60);
  });
});

describe("a parallel node in the run screen", () => {
  it("shows the running step's progress and agent activity in the inspector beside the graph", () => {
    let state = initialState("par-1");
    state = reduceViewer(state, { type: "view", view: midRun() }).state;
    // From the fork, down the flow order to the running step in the test branch.
    for (let i = 0; i < 3; i += 1) state = reduceViewer(state, { type: "key", key: "down" }).state;
    const lines = renderScreen(state, { width: 140, height: 40, now: NOW, glyphs: g });
    expectGolden("branches-screen", lines);
  });
});

describe("a parallel node in the widget and the footer", () => {
  it("gives each branch one line: its running node, its timing and its progress", () => {
    expect(renderWidgetLines(midRun(), { width: 110, now: NOW, glyphs: g })).toEqual([
      " ✓ ✦ plan                #1  1.0s",
      "›▶ ⫴ review              #1  running 1m03s",
      " ✓ ├ lint                succeeded  1.5s",
      " ▶ ├ test › integration  #1  running 1m01s  3/10 ██▍░░░░░ · about 2 min left · running the api suite",
      " ▶ └ docs › check        #1  running 1m03s  → read docs/viewer.md",
      " · λ summarize",
    ]);
  });

  it("shows each running agent step's own activity on its own branch's line", () => {
    const testAgent = {
      ...docsAgent,
      path: "review/test/integration",
      seq: 6,
      toolCalls: 2,
      text: "read api.test.ts",
    };
    // The run's latest fact is docs': a reader of agentProgress alone would see only that one.
    const view = forkView([], { agentProgress: docsAgent, agentActivity: [testAgent, docsAgent] });
    const lines = renderWidgetLines(view, { width: 110, now: NOW, glyphs: g });
    expect(lines.find((line) => line.includes("test › integration"))).toContain("→ read api.test.ts");
    expect(lines.find((line) => line.includes("docs › check"))).toContain("→ read docs/viewer.md");
    const inspector = renderInspector(view, null, "review/test/integration", {
      width: 80,
      now: NOW,
      glyphs: g,
    });
    expect(inspector).toContain("agent     → read api.test.ts (2 tool calls)");
  });

  it("shows each confidence of the estimate its own way on the running branch's line", () => {
    const words = {
      high: "· 2 min left",
      medium: "· about 2 min left",
      low: "· roughly 2 min left",
    } as const;
    for (const confidence of ["high", "medium", "low"] as const) {
      const lines = renderWidgetLines(forkView([testing(confidence)]), { width: 110, now: NOW, glyphs: g });
      expect(lines[3]).toContain(`3/10 ██▍░░░░░ ${words[confidence]} · running the api suite`);
    }
    // Without a clock (Pi's live widget) it names when, not a count that goes stale.
    const live = renderWidgetLines(forkView([testing("low")]), { width: 110, glyphs: g });
    expect(live[3]).toMatch(/3\/10 ██▍░░░░░ · done roughly \d\d:\d\d · running the api suite$/);
  });

  it("cuts a narrow line at the width: the progress goes first, then the names shorten", () => {
    for (const width of [12, 20, 30, 44]) {
      const lines = renderWidgetLines(midRun(), { width, now: NOW, glyphs: g });
      for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      expect(lines).toHaveLength(6);
    }
    const at30 = renderWidgetLines(midRun(), { width: 30, now: NOW, glyphs: g });
    expect(at30[3]).toBe(" ▶ ├ test …  #1  running 1m01s");
    const at60 = renderWidgetLines(midRun(), { width: 60, now: NOW, glyphs: g });
    expect(at60[3]).toBe(" ▶ ├ test › integration  #1  running 1m01s  3/10 ██▍░░░░░ ·…");
  });

  it("counts a branch as succeeded only once the step that ends it did", () => {
    // test is between unit and integration: nothing runs in it, yet it is not done.
    let view = withNode(forkView(), "review/test/integration", {
      state: "pending",
      visits: 0,
      attempt: 0,
      startedAt: null,
    });
    expect(renderWidgetLines(view, { width: 80, now: NOW, glyphs: g })[3]).toMatch(/^ ▶ ├ test {2}/);
    // The join was met without it (a join of any): the branch was cut short.
    view = withNode(view, "review", { state: "succeeded", finishedAt: 60_000 });
    view = withNode(view, "review/docs/check", { state: "succeeded", finishedAt: 50_000 });
    expect(renderWidgetLines(view, { width: 80, now: NOW, glyphs: g })[3]).toMatch(
      /^ ■ ├ test {2}.*cancelled/,
    );
  });

  it("says how many more branches there are past four", () => {
    const lines = renderWidgetLines(wideForkView(9, 3), { width: 60, now: NOW, glyphs: g });
    expect(lines).toEqual([
      "›▶ ⫴ fan        #1  running 1m04s",
      " ▶ ├ b0 › work  #1  running 1m04s",
      " ▶ ├ b1 › work  #1  running 1m04s",
      " ▶ ├ b2 › work  #1  running 1m04s",
      "   └ +6 more branches: 6 pending",
    ]);
  });

  it("names the running branch, or how many run, in the footer", () => {
    expect(renderFooterStatus(midRun(), NOW)).toBe(
      "wf parallel-review [running] review: 2 of 3 branches running",
    );
    const one = withNode(forkView([testing("low")]), "review/docs/check", {
      state: "succeeded",
      finishedAt: 30_000,
    });
    expect(renderFooterStatus(one, NOW)).toBe(
      "wf parallel-review [running] review › test › integration 3/10 · ~2 min left?",
    );
  });
});

describe("the inspector of a running step", () => {
  it("shows its progress, the estimate with its confidence, when it reported, and its agent", () => {
    const view = forkView([testing("high")], {
      agentProgress: { ...docsAgent, path: "review/test/integration" },
    });
    const lines = renderInspector(view, null, "review/test/integration", { width: 80, now: NOW, glyphs: g });
    expect(lines.slice(0, 6)).toEqual([
      "$ review/test/integration  shell",
      "▶ running  visits 1  attempt 1  1m01s so far",
      "progress  3/10  ██████░░░░░░░░░░░░░░  running the api suite",
      "estimate  2 min left (high confidence)",
      "reported  5s ago",
      "agent     → read docs/viewer.md (4 tool calls)",
    ]);
    // A finished step shows none of it: progress is live only.
    const done = withNode(view, "review/test/integration", { state: "succeeded", finishedAt: 64_000 });
    const after = renderInspector(done, null, "review/test/integration", { width: 80, now: NOW, glyphs: g });
    expect(after.some((line) => line.startsWith("progress") || line.startsWith("agent"))).toBe(false);
  });

  it("of the parallel node lists how its join is met and each branch's state", () => {
    const lines = renderInspector(midRun(), null, "review", { width: 60, now: NOW, glyphs: g });
    expect(lines.slice(2, 6)).toEqual([
      "join: all of 3 branches",
      "  ✓ lint  succeeded",
      "  ▶ test  running at integration",
      "  ▶ docs  running at check",
    ]);
  });

  it("inspects a node of the manifest's branches by its full path", () => {
    expect(forkManifest.nodes.some((node) => node.path === "review/test/report")).toBe(true);
    const lines = renderInspector(midRun(), null, "review/test/report", { width: 60, now: NOW, glyphs: g });
    expect(lines[1]).toBe("· pending  visits 0  attempt 0");
  });
});

describe("a branch card's state line", () => {
  it("drops its least useful parts to fit a narrow column instead of cutting them", () => {
    const done = forkView([], {});
    let view = done;
    for (const node of view.nodes)
      view = withNode(view, node.path, {
        state: "succeeded",
        visits: 1,
        attempt: 1,
        startedAt: 1_000,
        finishedAt: 2_000,
      });
    for (const width of [40, 52, 64, 100]) {
      const lines = renderGraph(view, { width, now: NOW, glyphs: g }).lines;
      const states = lines.flatMap((line) => line.match(/✓ succeeded[^│]*/g) ?? []);
      expect(states.length).toBeGreaterThan(0);
      // Whole words only: the state, then the visit and the time when they fit; never `#1 1…`.
      for (const state of states) expect(state.trimEnd()).toMatch(/^✓ succeeded( #1)?( 1\.0s)?$/);
    }
  });
});
