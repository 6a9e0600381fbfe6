import { visibleWidth } from "@earendil-works/pi-tui";
import type { GraphManifest } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { ansiTheme, renderFooterStatus, renderWidgetLines } from "../src/index.js";
import { chainManifest, manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

const hello: GraphManifest = {
  version: 1,
  workflow: "hello",
  title: "Say hello",
  startPath: "greet",
  exits: ["done"],
  maxSteps: 1000,
  nodes: [manifestNode("greet", "compute"), manifestNode("echo", "shell")],
  mounts: [],
  edges: [
    { from: "greet", to: { kind: "node", path: "echo" } },
    { from: "echo", to: { kind: "exit", exit: "done" } },
  ],
};

const compose: GraphManifest = {
  version: 1,
  workflow: "compose",
  startPath: "code/prepare",
  exits: ["done"],
  maxSteps: 1000,
  // The compiler lists root nodes first; the widget follows the edges instead.
  nodes: [
    manifestNode("summary", "compute"),
    manifestNode("code/prepare", "action"),
    manifestNode("docs/prepare", "action"),
  ],
  mounts: [
    {
      path: "code",
      name: "code",
      scope: "",
      workflow: "workspace",
      title: "code",
      startPath: "code/prepare",
      exits: ["ready"],
    },
    {
      path: "docs",
      name: "docs",
      scope: "",
      workflow: "workspace",
      title: "docs",
      startPath: "docs/prepare",
      exits: ["ready"],
    },
  ],
  edges: [
    { from: "summary", to: { kind: "exit", exit: "done" } },
    { from: "code/prepare", to: { kind: "node", path: "docs/prepare" }, via: ["code.ready"] },
    { from: "docs/prepare", to: { kind: "node", path: "summary" }, via: ["docs.ready"] },
  ],
};

describe("renderWidgetLines", () => {
  it("draws one line per node with state glyph, kind glyph, path, visits and timing", () => {
    let view = runViewOf(hello);
    view = withNode(view, "greet", {
      state: "succeeded",
      visits: 1,
      attempt: 1,
      startedAt: 1_000,
      finishedAt: 1_003,
    });
    view = withNode(view, "echo", { state: "running", visits: 1, attempt: 1, startedAt: 1_010 });
    expect(renderWidgetLines(view, { width: 60 })).toEqual([
      " ✓ λ greet  #1  3ms",
      "›▶ $ echo   #1  running",
    ]);
    expect(renderWidgetLines(view, { width: 60, now: 2_510 })[1]).toBe("›▶ $ echo   #1  running 1.5s");
  });

  it("shows the time left on a running step from its saved deadline", () => {
    let view = runViewOf(hello);
    view = withNode(view, "echo", {
      state: "running",
      visits: 1,
      attempt: 1,
      startedAt: 1_000,
      deadlineAt: 1_000 + 5 * 60_000,
    });
    expect(renderWidgetLines(view, { width: 60, now: 61_000 })[1]).toBe(
      "›▶ $ echo   #1  running 1m00s  4m00s left",
    );
    expect(renderWidgetLines(view, { width: 60, now: 400_000 })[1]).toBe(
      "›▶ $ echo   #1  running 6m39s  past its deadline",
    );
    // A live widget without a clock names when the deadline passes instead of a count that goes stale.
    expect(renderWidgetLines(view, { width: 60 })[1]).toMatch(
      /^›▶ \$ echo {3}#1 {2}running {2}due \d\d:\d\d:\d\d$/,
    );
  });

  it("shows failures with their error code and retries with their attempt", () => {
    let view = runViewOf(hello, { status: "failed", outcome: "failed", finishedAt: 2_000 });
    view = withNode(view, "greet", {
      state: "failed",
      visits: 2,
      attempt: 3,
      startedAt: 1_000,
      finishedAt: 2_400,
      errorCode: "node_failed",
    });
    expect(renderWidgetLines(view, { width: 80 })[0]).toBe(" ✗ λ greet  #2  try 3  1.4s  node_failed");
  });

  it("orders nodes along the edges and heads each include with its workflow", () => {
    let view = runViewOf(compose, { cursor: { path: "docs/prepare", visit: 1 } });
    view = withNode(view, "code/prepare", {
      state: "succeeded",
      visits: 1,
      attempt: 1,
      startedAt: 0,
      finishedAt: 20,
    });
    expect(renderWidgetLines(view, { width: 80 })).toEqual([
      " ✓ ⧉ code (workspace)  #1  20ms",
      " ✓ ⚙   code/prepare    #1  20ms",
      " · ⧉ docs (workspace)",
      "›· ⚙   docs/prepare",
      " · λ summary",
    ]);
  });

  it("windows long runs around the running node and says what is hidden", () => {
    let view = runViewOf(chainManifest(30));
    view = withNode(view, "n15", { state: "running", visits: 1, attempt: 1, startedAt: 0 });
    const lines = renderWidgetLines(view, { width: 40 });
    expect(lines).toHaveLength(8);
    expect(lines[0]).toBe("  ⋮ 13 more above");
    expect(lines[7]).toBe("  ⋮ 11 more below");
    expect(lines.filter((line) => line.startsWith("›"))).toEqual([expect.stringContaining("n15")]);
    // Near the start the window sticks to the top and hides nothing above.
    const first = renderWidgetLines(
      withNode(runViewOf(chainManifest(30)), "n0", { state: "running", visits: 1, attempt: 1, startedAt: 0 }),
      { width: 40, maxLines: 4 },
    );
    expect(first.map((line) => line.slice(0, 8))).toEqual(["›▶ ✦ n0 ", " · λ n1", " · $ n2", "  ⋮ 27 m"]);
  });

  it("follows the cursor when nothing runs and keeps the window within maxLines", () => {
    const view = runViewOf(chainManifest(12), {
      status: "done",
      outcome: "waiting",
      cursor: { path: "n11", visit: 1 },
    });
    const lines = renderWidgetLines(view, { width: 40, maxLines: 3 });
    expect(lines).toEqual(["  ⋮ 10 more above", " · ⚙ n10", "›· ✉ n11"]);
    expect(renderWidgetLines(view, { width: 40, maxLines: 1 })).toEqual(["›· ✉ n11"]);
  });

  it("puts a parked run's recovery reason on the last line", () => {
    const view = runViewOf(chainManifest(12), {
      status: "parked",
      recoveryReason: {
        code: "worker_lost_no_progress",
        message: "worker exited with code 1",
        launchId: "l1",
      },
    });
    const lines = renderWidgetLines(view, { width: 80, maxLines: 4 });
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe("‼ parked: worker exited with code 1 (worker_lost_no_progress)");
  });

  it("never draws a line wider than the width, with or without colour", () => {
    let view = runViewOf(compose, {
      status: "parked",
      recoveryReason: { code: "paused", message: "paused by the user from a very long explanation" },
    });
    view = withNode(view, "code/prepare", {
      state: "failed",
      visits: 3,
      attempt: 2,
      startedAt: 0,
      finishedAt: 99_000,
      errorCode: "effect_failed",
    });
    for (const width of [1, 5, 10, 17, 23, 40]) {
      for (const theme of [undefined, ansiTheme]) {
        const lines = renderWidgetLines(view, { width, theme });
        for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
        // Cut plain lines stay plain: no reset codes around the ellipsis.
        if (theme === undefined) for (const line of lines) expect(line).not.toContain("\u001b");
        expect(lines.length).toBeLessThanOrEqual(8);
      }
    }
  });

  it("returns nothing for a run without nodes and no reason", () => {
    expect(
      renderWidgetLines(runViewOf({ ...hello, nodes: [], edges: [] }, { nodes: [] }), { width: 40 }),
    ).toEqual([]);
  });
});

describe("renderFooterStatus", () => {
  it("names the workflow, the status word piw status uses, and the current node", () => {
    const view = withNode(runViewOf(hello), "echo", {
      state: "running",
      visits: 1,
      attempt: 1,
      startedAt: 0,
    });
    expect(renderFooterStatus(view)).toBe("wf hello [running] echo");
    expect(renderFooterStatus(runViewOf(hello, { status: "done", outcome: "timed_out" }))).toBe(
      "wf hello [timed out]",
    );
    expect(
      renderFooterStatus(
        runViewOf(hello, { status: "done", outcome: "waiting", cursor: { path: "greet", visit: 1 } }),
      ),
    ).toBe("wf hello [waiting] greet");
  });
});
