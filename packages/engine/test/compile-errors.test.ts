import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agent,
  compileWorkflow,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  type WorkflowDefinition,
} from "../src/index.js";

/** Builds a definition that `tsc` would reject, to see what the compiler says about it. */
function unchecked(spec: Record<string, unknown>): WorkflowDefinition<string, undefined> {
  return defineWorkflow(spec as never);
}

const step = () => compute({ run: () => 1 });

/** A child with one problem of its own, mounted under `docs` and again under `docs/inner`. */
const brokenChild = unchecked({
  name: "child",
  startAt: "a",
  exits: ["ready"],
  nodes: { a: step(), orphan: step() },
  edges: { a: { to: "ready" }, orphan: { to: "ready" } },
});

describe("compile errors", () => {
  it("reports unknown edge targets and sources at their full paths", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "a",
        nodes: { a: step(), b: step() },
        edges: { a: { to: "c" }, b: { to: "done" }, ghost: { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({
      path: "a",
      message: expect.stringContaining('unknown edge target "c"'),
    });
    expect(problems).toContainEqual({ path: "ghost", message: 'edge from unknown node "ghost"' });
  });

  it("reports unreachable nodes inside nested includes with their full paths", () => {
    const middle = unchecked({
      name: "middle",
      startAt: "inner",
      exits: ["ready"],
      nodes: {},
      includes: { inner: includeWorkflow(brokenChild) },
      edges: { "inner.ready": { to: "ready" } },
    });
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "docs",
        nodes: {},
        includes: { docs: includeWorkflow(middle) },
        edges: { "docs.ready": { to: "done" } },
      }),
    );
    expect(problems).toEqual([{ path: "docs/inner/orphan", message: "node is unreachable from the start" }]);
  });

  it("reports duplicate names across nodes, includes and exits", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "a",
        exits: ["a", "done", "done"],
        nodes: { a: step() },
        includes: { a: includeWorkflow(brokenChild) },
        edges: { a: { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({ path: "a", message: 'duplicate name "a": already used by a node' });
    expect(problems).toContainEqual({
      path: "done",
      message: 'duplicate name "done": already used by an exit',
    });
  });

  it("reports a missing or unknown startAt, in the child too", () => {
    const noStart = unchecked({
      name: "c",
      exits: ["ready"],
      nodes: { a: step() },
      edges: { a: { to: "ready" } },
    });
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "nope",
        nodes: { a: step() },
        includes: { docs: includeWorkflow(noStart) },
        edges: { a: { to: "docs" }, "docs.ready": { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({
      path: ":startAt",
      message: 'startAt "nope" is not a node or include of this workflow',
    });
    expect(problems).toContainEqual({
      path: "docs:startAt",
      message: "startAt is missing: name the node or include the workflow starts at",
    });
  });

  it("reports unknown and unrouted include exits", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "docs",
        nodes: {},
        includes: { docs: includeWorkflow(brokenChild) },
        edges: { "docs.redy": { to: "done" }, "nope.ready": { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({
      path: "docs.redy",
      message: 'unknown exit "redy" of include "docs" (its exits: "ready")',
    });
    expect(problems).toContainEqual({ path: "nope.ready", message: 'edge from unknown include "nope"' });
    expect(problems).toContainEqual({
      path: "docs.ready",
      message: 'exit "ready" of include "docs" has no edge',
    });
  });

  it("reports undecided and unknown decision cases", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "pick",
        nodes: { pick: decision({ choices: ["a", "b", "c"], decide: () => "a" }) },
        edges: { pick: decisionEdge({ a: "done", x: "done" }) },
      }),
    );
    expect(problems).toEqual([
      { path: "pick", message: 'unknown decision case "x" (choices: a, b, c)' },
      { path: "pick", message: 'undecided decision case "b"' },
      { path: "pick", message: 'undecided decision case "c"' },
    ]);
  });

  it("refuses reserved workflow names and '/' or '.' in node names", () => {
    const problems = problemsOf(
      unchecked({
        name: "status",
        startAt: "a/b",
        nodes: { "a/b": step(), "c.d": step() },
        edges: { "a/b": { to: "c.d" }, "c.d": { to: "done" } },
      }),
    );
    expect(problems.map((p) => p.path)).toEqual([":name", "a/b", "c.d", "c.d"]);
    expect(problems[0]?.message).toContain('"status" is reserved');
    expect(problems[1]?.message).toContain("no '/' or '.'");
  });

  it("reports a loop with no way out, but not a loop that can leave", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "a",
        nodes: { a: step(), b: step(), c: step(), d: step(), e: step() },
        edges: {
          a: { to: ["b", "d"], route: () => "b" },
          b: { to: "c" },
          c: { to: "b" },
          d: { to: ["e", "done"], route: () => "e" },
          e: { to: "d" },
        },
      }),
    );
    expect(problems).toEqual([
      {
        path: "b",
        message: "loop with no way out: b, c only route to each other and no edge leaves to an exit",
      },
    ]);
  });

  it("reports a loop that exits only through an include that never leaves", () => {
    const trap = unchecked({
      name: "trap",
      startAt: "spin",
      exits: ["ready"],
      nodes: { spin: step() },
      edges: { spin: { to: "spin" } },
    });
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "t",
        nodes: {},
        includes: { t: includeWorkflow(trap) },
        edges: { "t.ready": { to: "done" } },
      }),
    );
    expect(problems).toEqual([
      {
        path: "t/spin",
        message: "loop with no way out: t/spin only routes to itself and no edge leaves to an exit",
      },
    ]);
  });

  it("collects every problem at once, with full paths, instead of stopping at the first", () => {
    const child = unchecked({
      name: "child",
      startAt: "a",
      exits: ["ready"],
      nodes: { a: agent({ prompt: 3 as never, output: "nope" as never }), b: step() },
      edges: { a: { to: "missing" } },
    });
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "docs",
        input: { not: "a schema" },
        nodes: { pick: decision({ choices: [] as string[], decide: () => "x" }) },
        includes: { docs: includeWorkflow(child) },
        edges: { "docs.ready": { to: "pick" }, pick: { to: "done" } },
        maxSteps: 0,
      }),
    );
    expect(problems.map((p) => `${p.path} ${p.message}`)).toEqual([
      ":input input must be a zod schema",
      ":maxSteps maxSteps must be an integer from 1 to 1000000",
      "pick choices must be a non-empty array of non-empty strings",
      "pick a decision node is routed with decisionEdge({ <choice>: <target>, ... })",
      "docs/a prompt must be a string or a function of the node context",
      "docs/a output must be a zod schema",
      expect.stringMatching(/^docs\/a unknown edge target "missing"/),
      "docs/b node has no outgoing edge",
      "pick node is unreachable from the start",
      "docs/b node is unreachable from the start",
    ]);
  });

  it("refuses a workflow that includes itself, directly or through another", () => {
    const outer = unchecked({
      name: "outer",
      startAt: "a",
      nodes: { a: step() },
      edges: { a: { to: "done" } },
    });
    const inner = unchecked({
      name: "inner",
      startAt: "a",
      nodes: { a: step() },
      includes: { back: includeWorkflow(outer) },
      edges: { a: { to: "done" }, "back.done": { to: "done" } },
    });
    // Definitions are plain objects: close the cycle after both exist.
    Object.assign(outer, { includes: { inner: includeWorkflow(inner), self: includeWorkflow(outer) } });
    expect(problemsOf(outer)).toEqual([
      { path: "self", message: 'workflow "outer" includes itself' },
      { path: "inner.done", message: 'exit "done" of include "inner" has no edge' },
      { path: "self.done", message: 'exit "done" of include "self" has no edge' },
      { path: "inner/back", message: 'workflow "outer" includes itself' },
      { path: "inner/a", message: "node is unreachable from the start" },
    ]);
  });

  it("accepts a valid workflow with an input schema", () => {
    const ok = defineWorkflow({
      name: "ok",
      input: z.object({ n: z.number() }),
      startAt: "a",
      nodes: { a: step() },
      edges: { a: { to: "done" } },
    });
    expect(compileWorkflow(ok).inputSchema).toBe(ok.input);
  });
});
