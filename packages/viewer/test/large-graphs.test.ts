import type { GraphManifest } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { flowEntries, layoutGraph, renderWidgetLines } from "../src/index.js";
import { chainManifest, manifestNode, runViewOf } from "./run-view-fixture.js";

// The viewer draws what the compiler accepts (maxSteps allows a million visits): a generated
// workflow must lay out and render without a recursive walk or a spread as long as the graph.
// Past about 120,000 arguments a spread (`Math.max(...widths)`) overflows the call stack.
const SIZE = 150_000;

/** A 150,000-node chain inside one include, whose last node loops back to the first. */
function loopInMount(): GraphManifest {
  const chain = chainManifest(SIZE);
  const nodes = chain.nodes.map((node) => manifestNode(`big/${node.path}`, node.kind));
  const edges: GraphManifest["edges"] = chain.edges.map((edge) => ({
    from: `big/${edge.from}`,
    to: edge.to.kind === "node" ? { kind: "node", path: `big/${edge.to.path}` } : edge.to,
  }));
  edges.push({ from: `big/n${SIZE - 1}`, to: { kind: "node", path: "big/n0" }, label: "again" });
  return {
    ...chain,
    startPath: "big/n0",
    nodes,
    mounts: [
      {
        path: "big",
        name: "big",
        scope: "",
        workflow: "generated",
        title: "Generated",
        startPath: "big/n0",
        exits: ["done"],
      },
    ],
    edges,
  };
}

describe("a 150,000-node graph in the viewer", () => {
  it("orders and lays out the graph with its loop, and renders the widget", () => {
    const view = runViewOf(loopInMount());
    view.nodes = view.nodes.map((node, i) =>
      i < SIZE / 2
        ? { ...node, state: "succeeded", visits: 1, startedAt: 1_000 + i, finishedAt: 1_001 + i }
        : node,
    );

    const entries = flowEntries(view);
    expect(entries).toHaveLength(SIZE + 1);
    expect(entries[0]).toMatchObject({ kind: "mount", mount: { path: "big", startedAt: 1_000 } });
    expect(entries[SIZE]).toMatchObject({ kind: "node", node: { path: `big/n${SIZE - 1}` }, depth: 1 });

    const layout = layoutGraph(view.manifest, view.nodes);
    expect(layout.cards).toHaveLength(SIZE + 1);
    expect(layout.leftLanes).toBe(1);
    const loop = layout.edges.find((edge) => edge.label === "again");
    expect(loop).toMatchObject({ from: SIZE - 1, to: 0, route: { kind: "left", lane: 0 } });

    const widget = renderWidgetLines(view, { width: 80, maxLines: 8 });
    expect(widget.length).toBeGreaterThan(0);
    expect(widget.length).toBeLessThanOrEqual(8);
  });
});
