import {
  type GraphManifest,
  instantiateMapBranches,
  type NodeView,
  type RunRecord,
  UNVISITED_NODE,
} from "@piw/protocol";
import type { NodeProgressRecord } from "@piw/store";
import { describe, expect, it } from "vitest";
import { nodeProgressOf } from "../src/node-progress-view.js";

/**
 * A map's saved count is sent rate-limited, after the branch ends it counts were saved: a view built
 * in between shows the items ended, and its count must say so too.
 */

/** `fan` maps a two-node branch (`one` then `two`, which ends it at the join); `solo` is a plain node. */
const template: GraphManifest = {
  version: 1,
  workflow: "mapped",
  startPath: "fan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [
    { path: "fan", name: "fan", scope: "", kind: "map", title: "fan" },
    { path: "fan/each/one", name: "one", scope: "fan/each", kind: "action", title: "one" },
    { path: "fan/each/two", name: "two", scope: "fan/each", kind: "action", title: "two" },
    { path: "solo", name: "solo", scope: "", kind: "compute", title: "solo" },
  ],
  mounts: [],
  edges: [
    { from: "fan/each/one", to: { kind: "node", path: "fan/each/two" } },
    { from: "fan/each/two", to: { kind: "join", path: "fan" } },
    { from: "fan", to: { kind: "node", path: "solo" } },
    { from: "solo", to: { kind: "exit", exit: "done" } },
  ],
  forks: [
    {
      path: "fan",
      join: { kind: "all" },
      concurrency: null,
      branches: [{ name: "each", title: "fan[*]", startPath: "fan/each/one" }],
      map: true,
    },
  ],
};

const running = { status: "running" } as RunRecord;

function node(path: string, state: NodeView["state"], visits = 1, startedAt = 1): NodeView {
  if (state === "pending") return { path, kind: "action", title: path, ...UNVISITED_NODE };
  return {
    path,
    kind: "action",
    title: path,
    state,
    visits,
    attempt: 1,
    startedAt,
    finishedAt: state === "running" ? null : startedAt + 1,
    errorCode: state === "failed" ? "node_failed" : null,
  };
}

function saved(path: string, done: number, total: number, visit = 1): NodeProgressRecord {
  const state = { done, total, message: null };
  return {
    path,
    visit,
    attempt: 1,
    state,
    samples: [{ at: 1_000, done }],
    saves: 1,
    firstAt: 1_000,
    updatedAt: 1_000,
  };
}

/** Four items: 0 succeeded, 1 failed, 2 half way, 3 not started. */
const nodes: NodeView[] = [
  node("fan", "running"),
  node("fan/0/one", "succeeded"),
  node("fan/0/two", "succeeded"),
  node("fan/1/one", "succeeded"),
  node("fan/1/two", "failed"),
  node("fan/2/one", "succeeded"),
  node("fan/2/two", "running"),
  node("fan/3/one", "pending"),
  node("fan/3/two", "pending"),
  node("solo", "pending"),
];
const manifest = instantiateMapBranches(
  template,
  nodes.filter((n) => n.visits > 0).map((n) => n.path),
  [{ path: "fan", items: 4 }],
);

describe("a map's progress in the run view", () => {
  it("counts the items whose branches the view shows ended, when the saved count trails them", () => {
    const { progress } = nodeProgressOf(running, () => [saved("fan", 0, 4)], { manifest, nodes });
    expect(progress).toEqual([expect.objectContaining({ path: "fan", visit: 1, done: 2, total: 4 })]);
  });

  it("keeps a saved count that is already as far, and leaves other nodes' progress as saved", () => {
    const solo = { ...saved("solo", 1, 9) };
    const withSolo = nodes.map((n) => (n.path === "solo" ? node("solo", "running") : n));
    const { progress } = nodeProgressOf(running, () => [saved("fan", 3, 4), solo], {
      manifest,
      nodes: withSolo,
    });
    expect(progress).toEqual([
      expect.objectContaining({ path: "fan", done: 3, total: 4 }),
      expect.objectContaining({ path: "solo", done: 1, total: 9 }),
    ]);
  });

  it("counts, in a later visit of the map, only the items that ended in that visit", () => {
    // The map's second visit started at 10: item 1 ended again since; items 0, 2 and 3 show their
    // first visit's states (started at 1), which count as not started.
    const again = nodes.map((n) => {
      if (n.path === "fan") return node("fan", "running", 2, 10);
      if (n.path.startsWith("fan/1/")) return node(n.path, "succeeded", 2, 20);
      return n;
    });
    const { progress } = nodeProgressOf(running, () => [saved("fan", 0, 4, 2)], { manifest, nodes: again });
    expect(progress).toEqual([expect.objectContaining({ path: "fan", visit: 2, done: 1 })]);
  });

  it("leaves the count of another visit of the map as saved", () => {
    const again = nodes.map((n) => (n.path === "fan" ? node("fan", "running", 2) : n));
    const { progress } = nodeProgressOf(running, () => [saved("fan", 0, 4, 1)], { manifest, nodes: again });
    expect(progress).toEqual([expect.objectContaining({ path: "fan", visit: 1, done: 0 })]);
  });
});
