import { graphManifestSchema } from "@piw/protocol";
import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkpoint,
  compileWorkflow,
  compute,
  defineWorkflow,
  map,
  type WorkflowDefinition,
} from "../src/index.js";

const review = defineWorkflow({
  name: "review",
  title: "Review",
  input: z.string(),
  startAt: "read",
  nodes: {
    read: compute<string>({ run: ({ input }) => input.length }),
    judge: compute({ run: () => "ok" }),
  },
  edges: { read: { to: "judge" }, judge: { to: "done" } },
});

/** A map node written without map()'s types: these are the mistakes tsc would otherwise catch. */
function fanned(fields: Record<string, unknown>): WorkflowDefinition {
  return defineWorkflow({
    name: "fanned",
    startAt: "fan",
    nodes: {
      fan: { kind: "map", over: () => [], branch: review, ...fields },
      after: compute({ run: () => 1 }),
    },
    edges: { fan: { to: "after" }, after: { to: "done" } },
  } as never) as WorkflowDefinition;
}

describe("map: compiled node and manifest", () => {
  it("compiles the branch once as a template at <map>/each, with defaults filled in", () => {
    const wf = compileWorkflow(fanned({}));
    const fan = wf.nodes.get("fan");
    expect(fan).toMatchObject({
      kind: "map",
      join: { kind: "all" },
      concurrency: 4,
      maxItems: 100,
      branch: { name: "each", scope: "fan/each", startPath: "fan/each/read", title: "Review" },
    });
    expect(graphManifestSchema.parse(wf.manifest).forks).toEqual([
      {
        path: "fan",
        join: { kind: "all" },
        concurrency: 4,
        map: true,
        branches: [{ name: "each", title: "Review", startPath: "fan/each/read" }],
      },
    ]);
    expect(wf.manifest.edges).toContainEqual({ from: "fan/each/judge", to: { kind: "join", path: "fan" } });
  });

  it("resolves the path of an item's visit to its branch's node, and refuses the template path", () => {
    const wf = compileWorkflow(fanned({ join: { atLeast: 2 }, concurrency: 2, maxItems: 1000 }));
    expect(wf.nodes.get("fan/7/read")).toMatchObject({
      path: "fan/7/read",
      scope: "fan/7",
      lane: "fan/7",
      mapIndex: 7,
    });
    expect(wf.nodes.get("fan/each/read")).toBeUndefined();
    expect(wf.nodes.get("fan/x/read")).toBeUndefined();
    expect(wf.next("fan/7/read", 1)).toEqual({ kind: "node", path: "fan/7/judge" });
    expect(wf.next("fan/7/judge", "ok")).toEqual({ kind: "join", path: "fan" });
    expect(wf.nodes.get("fan")).toMatchObject({ join: { kind: "atLeast", count: 2 }, concurrency: 2 });
  });

  it("gives a map nested in a map's branch paths under both indices", () => {
    const inner = defineWorkflow({
      name: "inner",
      input: z.array(z.string()),
      startAt: "each",
      nodes: { each: map({ over: ({ input }) => input as string[], branch: review }) },
      edges: { each: { to: "done" } },
    });
    const wf = compileWorkflow(
      defineWorkflow({
        name: "outer",
        startAt: "fan",
        nodes: { fan: map({ over: () => [["a"]], branch: inner }) },
        edges: { fan: { to: "done" } },
      }),
    );
    expect(wf.nodes.get("fan/2/each")).toMatchObject({
      kind: "map",
      branch: { scope: "fan/2/each/each", startPath: "fan/2/each/each/read" },
    });
    expect(wf.nodes.get("fan/2/each/5/judge")).toMatchObject({ scope: "fan/2/each/5", mapIndex: 5 });
  });

  it("changes the definition digest with the map's settings", () => {
    const a = compileWorkflow(fanned({ concurrency: 2 })).digest;
    const b = compileWorkflow(fanned({ concurrency: 3 })).digest;
    const c = compileWorkflow(fanned({ concurrency: 2, maxItems: 5 })).digest;
    expect(new Set([a, b, c]).size).toBe(3);
  });
});

describe("map: compile errors", () => {
  const messages = (fields: Record<string, unknown>) => problemsOf(fanned(fields)).map((p) => p.message);

  it.each([
    [{ join: "most" }, 'join must be "all", "any" or { atLeast: k }'],
    [{ join: { atLeast: 0 } }, "join { atLeast: k } needs an integer k from 1 to maxItems (100); got 0"],
    [
      { join: { atLeast: 6 }, maxItems: 5 },
      "join { atLeast: k } needs an integer k from 1 to maxItems (5); got 6",
    ],
    [{ concurrency: 0 }, "concurrency must be an integer of at least 1 (how many branches run at once)"],
    [{ concurrency: 1.5 }, "concurrency must be an integer of at least 1 (how many branches run at once)"],
    [{ maxItems: 0 }, "maxItems must be an integer from 1 to 1000 (the longest list the map accepts)"],
    [{ maxItems: 1001 }, "maxItems must be an integer from 1 to 1000 (the longest list the map accepts)"],
    [
      { over: [1, 2] },
      "over must be a function of the scope ({ input, outputs }) that returns the list of items",
    ],
    [{ branch: 3 }, "the branch must be a workflow, an includeWorkflow(...) or a node"],
    [
      { branches: {} },
      expect.stringContaining('map nodes have no option "branches"; only parallel nodes take it'),
    ],
  ])("refuses %j", (fields, message) => {
    expect(messages(fields)).toContainEqual(message);
  });

  it("refuses a checkpoint inside the branch, like parallel's", () => {
    const gated = defineWorkflow({
      name: "gated",
      startAt: "ask",
      nodes: { ask: checkpoint({ prompt: "ok?", answer: z.boolean() }) },
      edges: { ask: { to: "done" } },
    });
    expect(problemsOf(fanned({ branch: gated }))).toContainEqual({
      path: "fan/each/ask",
      message: expect.stringContaining("a checkpoint cannot sit inside a map branch"),
    });
  });
});
