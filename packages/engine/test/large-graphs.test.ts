import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import {
  compileWorkflow,
  compute,
  defineWorkflow,
  includeWorkflow,
  MemoryRunPort,
  type WorkflowDefinition,
} from "../src/index.js";

// Generated graphs far deeper than a call stack: every graph walk in the compiler must be iterative
// and near-linear. 100,000 nodes is about 30x what a recursive walk survived.
const SIZE = 100_000;

function unchecked(spec: Record<string, unknown>): WorkflowDefinition {
  return defineWorkflow(spec as never);
}

const name = (i: number) => `n${i}`;

/** n0 → n1 → … → n(size-1); `last` says where the final node goes. */
function chain(size: number, last: string): WorkflowDefinition {
  const nodes: Record<string, unknown> = {};
  const edges: Record<string, unknown> = {};
  for (let i = 0; i < size; i += 1) {
    nodes[name(i)] = compute({ run: () => i });
    edges[name(i)] = { to: i + 1 < size ? name(i + 1) : last };
  }
  return unchecked({ name: "chain", startAt: name(0), nodes, edges, maxSteps: 1_000_000 });
}

describe("very large graphs and runs in the engine", () => {
  it("compiles a 100,000-node chain", () => {
    const compiled = compileWorkflow(chain(SIZE, "done"));
    expect(compiled.nodes.size).toBe(SIZE);
    expect(compiled.manifest.edges).toHaveLength(SIZE);
    expect(compiled.next(name(SIZE - 1), null)).toEqual({ kind: "exit", exit: "done" });
  });

  it("compiles a 100,000-node loop that a route leaves", () => {
    const definition = chain(SIZE, name(0));
    const edges = { ...definition.edges, [name(SIZE - 1)]: { to: [name(0), "done"], route: () => "done" } };
    const loop = compileWorkflow(unchecked({ ...definition, edges }));
    expect(loop.nodes.size).toBe(SIZE);
    expect(loop.next(name(SIZE - 1), null)).toEqual({ kind: "exit", exit: "done" });
  });

  it("reports every node of an unreachable 100,000-node loop, and the loop once with a bounded message", () => {
    const trap = chain(SIZE, name(0));
    const problems = problemsOf(
      unchecked({
        ...trap,
        startAt: "entry",
        nodes: { entry: compute({ run: () => 0 }), ...trap.nodes },
        edges: { entry: { to: "done" }, ...trap.edges },
      }),
    );
    const unreachable = problems.filter((p) => p.message === "node is unreachable from the start");
    expect(unreachable).toHaveLength(SIZE);
    const loops = problems.filter((p) => p.message.startsWith("loop with no way out"));
    expect(loops).toEqual([
      {
        path: name(0),
        message: `loop with no way out: ${[0, 1, 2, 3, 4, 5, 6, 7].map(name).join(", ")} and ${SIZE - 8} more only route to each other and no edge leaves to an exit`,
      },
    ]);
    expect(problems).toHaveLength(SIZE + 1);
  });

  it("compiles includes nested as deep as the 500-character path limit, and refuses deeper ones", () => {
    const nest = (depth: number): WorkflowDefinition => {
      let inner = unchecked({
        name: "leaf",
        startAt: "a",
        nodes: { a: compute({ run: () => 1 }) },
        edges: { a: { to: "done" } },
      });
      for (let level = 0; level < depth; level += 1) {
        inner = unchecked({
          name: `level${level}`,
          startAt: "m",
          nodes: {},
          includes: { m: includeWorkflow(inner) },
          edges: { "m.done": { to: "done" } },
        });
      }
      return inner;
    };
    // "m/" per level, then the leaf's exit "done": 248 levels fit in 500 characters.
    const deepest = compileWorkflow(nest(248));
    expect(deepest.startPath).toBe(`${"m/".repeat(248)}a`);
    expect(deepest.next(deepest.startPath, 1)).toEqual({ kind: "exit", exit: "done" });

    const problems = problemsOf(nest(20_000));
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.length).toBeLessThan(10);
    expect(problems.every((p) => p.message === "the full path is longer than 500 characters")).toBe(true);
  });

  it("reopens an in-memory run that saved 150,000 visits", () => {
    // Past about 120,000 arguments a spread (`push(...visits)`) overflows the call stack.
    const port = new MemoryRunPort();
    for (let i = 0; i < 150_000; i += 1) {
      port.visits.push({
        path: name(i),
        visit: 1,
        nodeKind: "compute",
        attempt: 1,
        status: "succeeded",
        output: i,
        nextPath: name(i + 1),
      });
    }
    const reopened = port.reopen();
    expect(reopened.visits).toHaveLength(150_000);
    expect(reopened.visits[149_999]).toEqual(port.visits[149_999]);
    expect(reopened.visits[0]).not.toBe(port.visits[0]);
  });
});
