import { type GraphManifest, instantiateMapBranches } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { renderFooterStatus, renderGraph, renderWidgetLines, UNICODE_GLYPHS } from "../src/index.js";
import { manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

const NOW = 65_000;
const g = UNICODE_GLYPHS;

/** `fan` maps a one-node branch `work` over a list: the manifest holds its template, `fan/each/work`. */
const template: GraphManifest = {
  version: 1,
  workflow: "fan-map",
  startPath: "fan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [manifestNode("fan", "map"), manifestNode("fan/each/work", "shell")],
  mounts: [],
  edges: [
    { from: "fan", to: { kind: "exit", exit: "done" } },
    { from: "fan/each/work", to: { kind: "join", path: "fan" } },
  ],
  forks: [
    {
      path: "fan",
      join: { kind: "all" },
      concurrency: 3,
      map: true,
      branches: [{ name: "each", title: "work", startPath: "fan/each/work" }],
    },
  ],
};

const running = { state: "running" as const, visits: 1, attempt: 1, startedAt: 1_000, finishedAt: null };

/** A map of `count` items whose branches have all started, the first `runningCount` still running. */
function mapView(count: number, runningCount: number) {
  const paths = Array.from({ length: count }, (_, i) => `fan/${i}/work`);
  let view = runViewOf(instantiateMapBranches(template, ["fan", ...paths]), { runId: "map-1" });
  view = withNode(view, "fan", running);
  paths.forEach((path, i) => {
    view = withNode(
      view,
      path,
      i < runningCount ? running : { ...running, state: "succeeded", finishedAt: 2_000 },
    );
  });
  return view;
}

describe("a map node's branches in the views", () => {
  it("gives each item's branch a widget line labelled <map>[<index>], capped with +N more", () => {
    expect(renderWidgetLines(mapView(9, 3), { width: 60, now: NOW, glyphs: g })).toEqual([
      "›▶ ⋔ fan            #1  running 1m04s",
      " ▶ ├ fan[0] › work  #1  running 1m04s",
      " ▶ ├ fan[1] › work  #1  running 1m04s",
      " ▶ ├ fan[2] › work  #1  running 1m04s",
      "   └ +6 more branches: 6 succeeded",
    ]);
  });

  it("draws the items' branches as columns, bannered by index, and counts the rest in one box", () => {
    const lines = renderGraph(mapView(9, 3), { width: 60, now: NOW, glyphs: g }).lines;
    const banners = lines.find((line) => line.includes("─ fan[0] ─")) ?? "";
    expect(banners).toContain("─ fan[2] ─");
    expect(banners).not.toContain("─ fan[3] ─");
    expect(lines.some((line) => line.includes("+6 more"))).toBe(true);
  });

  it("names the one running item in the footer, or how many of them run", () => {
    expect(renderFooterStatus(mapView(3, 1), NOW)).toBe("wf fan-map [running] fan › fan[0] › work");
    expect(renderFooterStatus(mapView(4, 2), NOW)).toBe("wf fan-map [running] fan: 2 of 4 branches running");
  });

  it("shows the queued items of a saved list as pending branches, capped with +N more", () => {
    // Ten items saved, two started: the other eight are branches too, not yet visited.
    let view = runViewOf(
      instantiateMapBranches(template, ["fan", "fan/0/work", "fan/1/work"], [{ path: "fan", items: 10 }]),
    );
    view = withNode(withNode(withNode(view, "fan", running), "fan/0/work", running), "fan/1/work", running);
    expect(view.manifest.forks?.[0]?.branches).toHaveLength(10);
    expect(renderWidgetLines(view, { width: 60, now: NOW, glyphs: g })).toEqual([
      "›▶ ⋔ fan            #1  running 1m04s",
      " ▶ ├ fan[0] › work  #1  running 1m04s",
      " ▶ ├ fan[1] › work  #1  running 1m04s",
      " · ├ fan[2]",
      "   └ +7 more branches: 7 pending",
    ]);
    const lines = renderGraph(view, { width: 60, now: NOW, glyphs: g }).lines;
    const banners = lines.find((line) => line.includes("─ fan[0] ─")) ?? "";
    expect(banners).toContain("─ fan[2] ─");
    expect(lines.find((line) => line.includes("· pending"))).toContain("▶ running");
    expect(lines.find((line) => line.includes("+7 more"))).toBeDefined();
    expect(lines.some((line) => line.includes("7 pending"))).toBe(true);
  });

  it("shows the template branch of a map no item of which has started", () => {
    const view = withNode(runViewOf(instantiateMapBranches(template, ["fan"])), "fan", running);
    expect(renderWidgetLines(view, { width: 60, now: NOW, glyphs: g })[1]).toBe(" · └ fan[*]");
  });
});
