import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import {
  compileWorkflow,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  shell,
  type WorkflowDefinition,
} from "../src/index.js";

/** A definition `tsc` would refuse, to see what the compiler says about it. */
function unchecked(spec: Record<string, unknown>): WorkflowDefinition<string, undefined> {
  return defineWorkflow(spec as never);
}

const step = () => compute({ run: () => 1 });
const test = () => shell({ exec: ["true"] });

describe("outcome routes in the compiler", () => {
  it("refuses a route to an unknown node, naming the node and what is there", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "test",
        nodes: { test: test(), fix: step() },
        edges: { test: { to: "done", onFailure: "fxi" }, fix: { to: "test" } },
      }),
    );
    expect(problems).toContainEqual({
      path: "test",
      message: 'unknown onFailure target "fxi" (nodes and includes here: "test", "fix")',
    });
  });

  it("refuses an exit as a failure target, an exit code off a shell node and codes that are not exit codes", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "test",
        nodes: { test: test(), fix: step() },
        edges: {
          test: { to: "fix", onTimeout: "done", onExitCode: { "-1": "fix", 256: "fix", 3: "ghost" } },
          fix: { to: "done", onExitCode: { 1: "test" } },
        },
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        {
          path: "test",
          message: expect.stringMatching(/^onTimeout leads to exit "done": a failure is routed/),
        },
        { path: "test", message: 'onExitCode has "-1", not an exit code from 0 to 255' },
        { path: "test", message: 'onExitCode has "256", not an exit code from 0 to 255' },
        { path: "test", message: expect.stringContaining('unknown onExitCode 3 target "ghost"') },
        { path: "fix", message: "onExitCode routes shell nodes only" },
      ]),
    );
  });

  it("keeps reporting outcome routes on an include's exit edge as unknown options", () => {
    const child = defineWorkflow({
      name: "child",
      startAt: "a",
      nodes: { a: step() },
      edges: { a: { to: "done" } },
    });
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "inner",
        includes: { inner: includeWorkflow(child) },
        nodes: { fix: step() },
        edges: { "inner.done": { to: "done", onFailure: "fix" }, fix: { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({
      path: "inner.done",
      message: 'an edge has no option "onFailure" (this edge is { to: "target", label })',
    });
  });

  it("refuses okExitCodes that are not a list of exit codes", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "test",
        nodes: { test: shell({ exec: ["true"], okExitCodes: [0, 1.5] }) },
        edges: { test: { to: "done" } },
      }),
    );
    expect(problems).toContainEqual({
      path: "test",
      message: "okExitCodes must be a non-empty array of exit codes from 0 to 255",
    });
  });

  it("draws outcome routes as labelled edges, so a node reached only by a failure is reachable", () => {
    const child = defineWorkflow({
      name: "repair",
      startAt: "a",
      nodes: { a: step() },
      edges: { a: { to: "done" } },
    });
    const compiled = compileWorkflow(
      defineWorkflow({
        name: "w",
        startAt: "test",
        includes: { repair: includeWorkflow(child) },
        nodes: { test: test(), fix: step(), pick: decision({ choices: ["x"], decide: () => "x" }) },
        edges: {
          test: { to: "pick", onFailure: "fix", onTimeout: "repair", onExitCode: { 2: "fix" } },
          fix: { to: "done" },
          pick: decisionEdge({ x: "done" }, { onFailure: "fix" }),
          "repair.done": { to: "done" },
        },
      }),
    );
    expect(compiled.manifest.edges.filter((e) => e.from === "test")).toEqual([
      { from: "test", to: { kind: "node", path: "pick" } },
      { from: "test", to: { kind: "node", path: "fix" }, label: "on failure" },
      { from: "test", to: { kind: "node", path: "repair/a" }, label: "on timeout" },
      { from: "test", to: { kind: "node", path: "fix" }, label: "exit 2" },
    ]);
    expect(compiled.failureRoute("test", { status: "failed", exitCode: 2 })).toBe("fix");
    expect(compiled.failureRoute("test", { status: "failed", exitCode: 7 })).toBe("fix");
    expect(compiled.failureRoute("test", { status: "timed_out" })).toBe("repair/a");
    expect(compiled.failureRoute("pick", { status: "failed" })).toBe("fix");
    expect(compiled.failureRoute("fix", { status: "failed" })).toBeNull();
  });

  it("changes the definition digest when a route changes", () => {
    const build = (onFailure: "fix" | "other") =>
      compileWorkflow(
        defineWorkflow({
          name: "w",
          startAt: "test",
          nodes: { test: test(), fix: step(), other: step() },
          edges: { test: { to: "fix", onFailure }, fix: { to: "other" }, other: { to: "done" } },
        }),
      ).digest;
    expect(build("fix")).not.toBe(build("other"));
  });
});
