import type { GraphManifest, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  plainTheme,
  renderFooterStatus,
  renderRunTable,
  renderWidgetLines,
  runProgressWords,
  UNICODE_GLYPHS,
} from "../src/index.js";
import { runHeader } from "../src/run-header.js";
import { manifestNode, runViewOf } from "./run-view-fixture.js";

// A run-wide report (`ctx.progress` with `scope: "run"`) is what a parked run shows of its progress:
// the widget, the footer and the viewer's header all carry it, with the author's estimate of its end.
const loop: GraphManifest = {
  version: 1,
  workflow: "watch",
  startPath: "decide",
  exits: ["done"],
  maxSteps: 1000,
  nodes: [manifestNode("decide", "compute"), manifestNode("pause", "wait")],
  mounts: [],
  edges: [
    { from: "decide", to: { kind: "node", path: "pause" } },
    { from: "pause", to: { kind: "node", path: "decide" } },
  ],
};

const NOW = Date.UTC(2026, 11, 4, 12, 0, 0);

function parked(overrides: Partial<RunView> = {}): RunView {
  return runViewOf(loop, {
    status: "parked",
    recoveryReason: { code: "waiting", message: "waiting", path: "pause", visit: 3, until: NOW + 60_000 },
    runProgress: {
      path: "decide",
      visit: 3,
      done: 3,
      total: 100,
      message: "Not met yet.",
      updatedAt: NOW - 1_000,
      eta: { at: NOW + 2 * 3_600_000, confidence: "high" },
    },
    ...overrides,
  });
}

describe("a run's run-wide progress", () => {
  it("reads as a count, a bar, the time left to its latest end and the message", () => {
    expect(runProgressWords(parked(), { now: NOW, glyphs: UNICODE_GLYPHS, bar: 10 })).toBe(
      "3/100 ▎░░░░░░░░░ · 2 h left · Not met yet.",
    );
    expect(runProgressWords(parked({ runProgress: undefined }), { now: NOW, glyphs: UNICODE_GLYPHS })).toBe(
      "",
    );
  });

  it("shows in the widget of a parked run, above its reason", () => {
    const lines = renderWidgetLines(parked(), { width: 100, now: NOW, glyphs: UNICODE_GLYPHS });
    expect(lines.at(-2)).toMatch(/^· run 3\/100 \S+ · 2 h left · Not met yet\.$/);
    expect(lines.at(-1)).toMatch(/^‖? ?.*parked: waiting until 2026-12-04 12:01:00 UTC$/);
    // Without one, nothing is added.
    const without = renderWidgetLines(parked({ runProgress: undefined }), { width: 100, now: NOW });
    expect(without).toHaveLength(lines.length - 1);
  });

  it("shows in the footer and the viewer's header while parked", () => {
    expect(renderFooterStatus(parked(), NOW)).toBe("wf watch [parked] 3/100 · 2 h left");
    expect(runHeader(parked(), NOW, plainTheme, UNICODE_GLYPHS)).toContain(" · 3/100 · 2 h left");
    expect(renderFooterStatus(parked({ runProgress: undefined }), NOW)).toBe("wf watch [parked]");
  });

  it("shows in the run list beside the wait", () => {
    const options = { width: 200, now: NOW, theme: plainTheme, glyphs: UNICODE_GLYPHS };
    expect(renderRunTable([parked()], options).at(-1)).toMatch(
      / waiting until 2026-12-04 12:01:00 UTC · 3\/100 · 2 h left$/,
    );
    expect(renderRunTable([parked({ runProgress: undefined })], options).at(-1)).toMatch(
      / waiting until 2026-12-04 12:01:00 UTC$/,
    );
  });
});
