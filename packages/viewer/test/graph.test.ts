import type { RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { renderGraph } from "../src/index.js";
import { parseGraph } from "./graph-verifier.js";
import { randomView } from "./random-graph.js";

function expectedEdges(view: RunView) {
  return view.manifest.edges
    .flatMap((edge) => (edge.to.kind === "join" ? [] : [{ ...edge, to: edge.to }]))
    .map((edge) => ({
      from: edge.from,
      to: edge.to.kind === "node" ? edge.to.path : `exit:${edge.to.exit}`,
      label: edge.label,
    }))
    .sort(byEdge);
}

function byEdge(
  a: { from: string; to: string; label?: string },
  b: { from: string; to: string; label?: string },
) {
  return `${a.from}>${a.to}>${a.label ?? ""}`.localeCompare(`${b.from}>${b.to}>${b.label ?? ""}`);
}

describe("graph verifier", () => {
  const seeds = Array.from({ length: 60 }, (_, i) => 1_000 + i * 7_919);

  it.each(seeds)("seed %i: every edge joins the right cards and nothing overlaps", (seed) => {
    const view = randomView(seed);
    const highlight = view.nodes[seed % view.nodes.length]?.path ?? null;
    const parsed = parseGraph(renderGraph(view, { width: 200, highlight }).lines);
    expect(parsed.problems).toEqual([]);
    const cardIds = parsed.cards.map((card) => card.id).sort();
    const exits = new Set(view.manifest.exits);
    for (const edge of view.manifest.edges) if (edge.to.kind === "exit") exits.add(edge.to.exit);
    expect(cardIds).toEqual(
      [...view.nodes.map((node) => node.path), ...[...exits].map((e) => `exit:${e}`)].sort(),
    );
    expect(parsed.edges.sort(byEdge)).toEqual(expectedEdges(view));
  });

  it("covers branches, loops, self-loops, jumps and includes across the seeds", () => {
    const seen = { labels: 0, back: 0, self: 0, includes: 0, nested: 0 };
    for (const seed of seeds) {
      const view = randomView(seed);
      const order = new Map(view.nodes.map((node, i) => [node.path, i]));
      for (const edge of view.manifest.edges) {
        if (edge.label !== undefined) seen.labels += 1;
        if (edge.to.kind !== "node") continue;
        if (edge.to.path === edge.from) seen.self += 1;
        else if ((order.get(edge.to.path) ?? 0) < (order.get(edge.from) ?? 0)) seen.back += 1;
      }
      seen.includes += view.manifest.mounts.length;
      seen.nested += view.manifest.mounts.filter((mount) => mount.scope !== "").length;
    }
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(0);
  });

  it("draws any slice of rows exactly as the same rows of the whole graph", () => {
    for (const seed of seeds.slice(0, 10)) {
      const view = randomView(seed);
      const whole = renderGraph(view, { width: 200 });
      for (const top of [0, 3, 17, whole.height - 5]) {
        const slice = renderGraph(view, { width: 200, rows: { top, height: 9 } });
        expect(slice.lines).toEqual(whole.lines.slice(Math.max(0, top), Math.max(0, top) + 9));
      }
    }
  });

  it("catches a drawing whose line ends nowhere", () => {
    const lines = renderGraph(randomView(1_000), { width: 200 }).lines;
    const broken = lines.map((line) => line.replace(/[▼▽]/, " "));
    expect(parseGraph(broken).problems).not.toEqual([]);
  });
});
