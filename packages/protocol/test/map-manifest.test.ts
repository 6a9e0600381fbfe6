import { describe, expect, it } from "vitest";
import { type GraphManifest, graphManifestSchema, instantiateMapBranches } from "../src/index.js";

/** `fan` maps `review` (read → judge) over a list; `inner` is a map nested in the branch. */
const manifest: GraphManifest = graphManifestSchema.parse({
  version: 1,
  workflow: "fanned",
  startPath: "fan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [
    { path: "fan", name: "fan", scope: "", kind: "map", title: "Fan" },
    { path: "fan/each/read", name: "read", scope: "fan/each", kind: "compute", title: "read" },
    { path: "fan/each/inner", name: "inner", scope: "fan/each", kind: "map", title: "inner" },
    {
      path: "fan/each/inner/each/inner",
      name: "inner",
      scope: "fan/each/inner/each",
      kind: "compute",
      title: "x",
    },
    { path: "after", name: "after", scope: "", kind: "compute", title: "after" },
  ],
  mounts: [],
  edges: [
    { from: "fan", to: { kind: "node", path: "after" } },
    { from: "fan/each/read", to: { kind: "node", path: "fan/each/inner" } },
    { from: "fan/each/inner", to: { kind: "join", path: "fan" } },
    { from: "fan/each/inner/each/inner", to: { kind: "join", path: "fan/each/inner" } },
    { from: "after", to: { kind: "exit", exit: "done" } },
  ],
  forks: [
    {
      path: "fan",
      join: { kind: "all" },
      concurrency: 4,
      map: true,
      branches: [{ name: "each", title: "Review", startPath: "fan/each/read" }],
    },
    {
      path: "fan/each/inner",
      join: { kind: "any" },
      concurrency: 2,
      map: true,
      branches: [{ name: "each", title: "x", startPath: "fan/each/inner/each/inner" }],
    },
  ],
});

describe("instantiateMapBranches", () => {
  it("keeps the template branch of a map no item of which has run", () => {
    expect(instantiateMapBranches(manifest, ["fan"])).toEqual(manifest);
  });

  it("lists the branches the visits ran, in index order, with their nodes, edges and nested maps", () => {
    const paths = ["fan", "fan/1/read", "fan/0/read", "fan/0/inner", "fan/0/inner/3/inner", "after"];
    const view = graphManifestSchema.parse(instantiateMapBranches(manifest, paths));
    expect(view.nodes.map((n) => n.path)).toEqual([
      "fan",
      "fan/0/read",
      "fan/1/read",
      "fan/0/inner",
      "fan/1/inner",
      "fan/0/inner/3/inner",
      "fan/1/inner/each/inner",
      "after",
    ]);
    expect(view.forks).toEqual([
      {
        ...manifest.forks?.[0],
        branches: [
          { name: "0", title: "fan[0]", startPath: "fan/0/read" },
          { name: "1", title: "fan[1]", startPath: "fan/1/read" },
        ],
      },
      {
        ...manifest.forks?.[1],
        path: "fan/0/inner",
        branches: [{ name: "3", title: "inner[3]", startPath: "fan/0/inner/3/inner" }],
      },
      {
        ...manifest.forks?.[1],
        path: "fan/1/inner",
        branches: [{ name: "each", title: "x", startPath: "fan/1/inner/each/inner" }],
      },
    ]);
    expect(view.edges).toContainEqual({ from: "fan/1/inner", to: { kind: "join", path: "fan" } });
    expect(view.edges).toContainEqual({
      from: "fan/0/inner/3/inner",
      to: { kind: "join", path: "fan/0/inner" },
    });
  });

  it("lists every item of a saved list, started or not, beside the items the visits ran", () => {
    const paths = ["fan", "fan/0/read", "fan/0/inner"];
    const lists = [
      { path: "fan", items: 3 },
      { path: "fan/0/inner", items: 2 },
    ];
    const view = graphManifestSchema.parse(instantiateMapBranches(manifest, paths, lists));
    expect(view.forks?.[0]?.branches.map((b) => [b.title, b.startPath])).toEqual([
      ["fan[0]", "fan/0/read"],
      ["fan[1]", "fan/1/read"],
      ["fan[2]", "fan/2/read"],
    ]);
    expect(view.nodes.map((n) => n.path)).toEqual([
      "fan",
      "fan/0/read",
      "fan/1/read",
      "fan/2/read",
      "fan/0/inner",
      "fan/1/inner",
      "fan/2/inner",
      "fan/0/inner/0/inner",
      "fan/0/inner/1/inner",
      "fan/1/inner/each/inner",
      "fan/2/inner/each/inner",
      "after",
    ]);
    expect(view.forks?.map((f) => [f.path, f.branches.map((b) => b.name)])).toEqual([
      ["fan", ["0", "1", "2"]],
      ["fan/0/inner", ["0", "1"]],
      ["fan/1/inner", ["each"]],
      ["fan/2/inner", ["each"]],
    ]);
  });

  it("keeps the template branch for an empty saved list, and ignores a list at no map's path", () => {
    const lists = [
      { path: "fan", items: 0 },
      { path: "after", items: 4 },
      { path: "fan/each/inner", items: 4 },
    ];
    expect(instantiateMapBranches(manifest, ["fan", "after"], lists)).toEqual(manifest);
  });
});
