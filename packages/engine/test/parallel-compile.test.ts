import { graphManifestSchema } from "@piw/protocol";
import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkpoint,
  compileWorkflow,
  compute,
  defineWorkflow,
  includeWorkflow,
  parallel,
  shell,
  type WorkflowDefinition,
} from "../src/index.js";

const review = defineWorkflow({
  name: "review",
  title: "Review",
  input: z.object({ topic: z.string() }),
  startAt: "read",
  nodes: {
    read: compute<{ topic: string }>({ run: ({ input }) => input.topic.length }),
    judge: compute({ run: () => "ok" }),
  },
  edges: { read: { to: "judge" }, judge: { to: "done" } },
});

function checks(branches: Record<string, unknown>, join: unknown = "all", concurrency?: unknown) {
  // Written without parallel()'s types: these are the mistakes tsc would otherwise catch.
  return defineWorkflow({
    name: "checks",
    startAt: "prepare",
    nodes: {
      prepare: compute({ run: () => ({ topic: "x" }) }),
      fan: { kind: "parallel", branches, join, concurrency },
      after: compute({ run: () => 1 }),
    },
    edges: { prepare: { to: "fan" }, fan: { to: "after" }, after: { to: "done" } },
  } as never) as WorkflowDefinition;
}

describe("parallel: compiled paths and manifest", () => {
  const workflow = defineWorkflow({
    name: "fanout",
    input: z.object({ topic: z.string() }),
    startAt: "fan",
    nodes: {
      fan: parallel({
        title: "Checks",
        branches: {
          lint: shell({ exec: ["true"], title: "Lint" }),
          review,
          second: includeWorkflow(review, { input: { topic: "other" }, title: "Second look" }),
        },
        join: { atLeast: 2 },
        concurrency: 2,
      }),
      after: compute({ run: ({ outputs }) => outputs.fan }),
    },
    edges: { fan: { to: "after" }, after: { to: "done" } },
  });
  const compiled = compileWorkflow(workflow);

  it("gives every branch node the path <fork>/<branch>/<local>, its scope and its lane", () => {
    const lint = compiled.nodes.get("fan/lint/lint");
    expect(lint).toMatchObject({ kind: "shell", scope: "fan/lint", lane: "fan/lint", title: "Lint" });
    expect(compiled.nodes.get("fan/review/read")).toMatchObject({ scope: "fan/review", lane: "fan/review" });
    expect(compiled.nodes.get("fan/second/judge")).toMatchObject({ scope: "fan/second", lane: "fan/second" });
    expect(compiled.nodes.get("fan")).toMatchObject({ kind: "parallel", scope: "", lane: "" });
    expect(compiled.nodes.get("after")?.lane).toBe("");
  });

  it("lists the fork with its join, concurrency and branch starts, and ends branches at the join", () => {
    const manifest = graphManifestSchema.parse(compiled.manifest);
    expect(manifest.forks).toEqual([
      {
        path: "fan",
        join: { kind: "atLeast", count: 2 },
        concurrency: 2,
        branches: [
          { name: "lint", title: "Lint", startPath: "fan/lint/lint" },
          { name: "review", title: "Review", startPath: "fan/review/read" },
          { name: "second", title: "Second look", startPath: "fan/second/read" },
        ],
      },
    ]);
    expect(manifest.nodes.find((n) => n.path === "fan")?.kind).toBe("parallel");
    expect(manifest.nodes.find((n) => n.path === "fan/review/judge")?.scope).toBe("fan/review");
    const edges = manifest.edges.map(
      (e) => `${e.from}->${e.to.kind}:${"path" in e.to ? e.to.path : e.to.exit}`,
    );
    expect(edges).toContain("fan/lint/lint->join:fan");
    expect(edges).toContain("fan/review/read->node:fan/review/judge");
    expect(edges).toContain("fan/review/judge->join:fan");
    expect(edges).toContain("fan->node:after");
    // The fork-to-branch edges are derived from `forks`, never listed.
    expect(edges.filter((e) => e.startsWith("fan->"))).toEqual(["fan->node:after"]);
    // Branches are not mounts.
    expect(manifest.mounts).toEqual([]);
  });

  it("projects a branch's input like an include, and gives a bare workflow the parent's input", () => {
    const outputs = new Map<string, unknown>();
    expect(compiled.scopeInput("fan/review", { topic: "t" }, outputs)).toEqual({ topic: "t" });
    expect(compiled.scopeInput("fan/second", { topic: "t" }, outputs)).toEqual({ topic: "other" });
    expect(compiled.next("fan/review/judge", "ok")).toEqual({ kind: "join", path: "fan" });
  });

  it("keeps a manifest without parallel nodes free of forks", () => {
    expect(compileWorkflow(review).manifest.forks).toBeUndefined();
  });

  it("nests a parallel node inside a branch, with paths that still never collide", () => {
    const nested = defineWorkflow({
      name: "nested",
      startAt: "outer",
      nodes: {
        outer: parallel({
          branches: {
            a: parallel({
              branches: { x: compute({ run: () => 1 }), y: compute({ run: () => 2 }) },
              join: "all",
            }),
            b: compute({ run: () => 3 }),
          },
          join: "all",
        }),
      },
      edges: { outer: { to: "done" } },
    });
    const c = compileWorkflow(nested);
    expect(c.nodes.get("outer/a/a")).toMatchObject({ kind: "parallel", lane: "outer/a" });
    expect(c.nodes.get("outer/a/a/x/x")).toMatchObject({ lane: "outer/a/a/x", scope: "outer/a/a/x" });
    expect(c.manifest.forks?.map((f) => f.path)).toEqual(["outer", "outer/a/a"]);
  });
});

describe("parallel: compile errors", () => {
  const ok = compute({ run: () => 1 });

  it("refuses a checkpoint inside a branch, and says a gate in a branch is not supported", () => {
    const gated = defineWorkflow({
      name: "gated",
      startAt: "ask",
      nodes: { ask: checkpoint({ prompt: "p", answer: z.boolean() }) },
      edges: { ask: { to: "done" } },
    });
    const problems = problemsOf(checks({ a: ok, gate: gated }));
    expect(problems).toContainEqual({
      path: "fan/gate/ask",
      message: expect.stringContaining("a checkpoint cannot sit inside a parallel branch"),
    });
    expect(problemsOf(checks({ a: checkpoint({ prompt: "p", answer: z.boolean() }) }))[0]?.path).toBe(
      "fan/a/a",
    );
  });

  it("refuses an unknown join, atLeast out of 1..n, concurrency below 1 and empty branches", () => {
    expect(problemsOf(checks({ a: ok }, "some"))).toEqual([
      { path: "fan", message: 'join must be "all", "any" or { atLeast: k }' },
    ]);
    for (const k of [0, 3, 1.5]) {
      expect(problemsOf(checks({ a: ok, b: ok }, { atLeast: k }))[0]?.message).toContain(
        "join { atLeast: k } needs an integer k from 1 to the number of branches (2)",
      );
    }
    expect(problemsOf(checks({ a: ok }, "all", 0))[0]?.message).toContain(
      "concurrency must be an integer of at least 1",
    );
    expect(problemsOf(checks({}))).toContainEqual({
      path: "fan",
      message: "a parallel node needs at least one branch",
    });
  });

  it("refuses a branch that is not a workflow, an include or a node, and a bad branch name", () => {
    expect(problemsOf(checks({ a: 5 }))).toContainEqual({
      path: "fan",
      message: 'branch "a" must be a workflow, an includeWorkflow(...) or a node',
    });
    expect(problemsOf(checks({ "a.b": ok }))[0]?.message).toContain('branch name "a.b" is invalid');
  });

  it("reports problems inside a branch at the branch's full path", () => {
    const broken = defineWorkflow({
      name: "broken",
      startAt: "x",
      nodes: { x: compute({ run: () => 1 }) },
      edges: { x: { to: "nowhere" } } as never,
    });
    expect(problemsOf(checks({ b: broken }))[0]?.path).toBe("fan/b/x");
  });
});
