import type { CompileProblem } from "./compile-error.js";
import type { NextStep } from "./compiled-workflow.js";

/** The compiled graph over full node paths; exits are sinks. */
export interface PathGraph {
  /** Every node path, in definition order. */
  paths: readonly string[];
  successors: ReadonlyMap<string, readonly NextStep[]>;
  startPath?: string;
}

/** Reports unreachable nodes and loops that no edge leaves (a strongly connected trap without an exit). */
export function checkGraph(graph: PathGraph, problems: CompileProblem[]): void {
  if (graph.startPath !== undefined) {
    const reachable = reachableFrom(graph, graph.startPath);
    for (const path of graph.paths) {
      if (!reachable.has(path)) problems.push({ path, message: "node is unreachable from the start" });
    }
  }
  for (const component of stronglyConnected(graph)) {
    const members = new Set(component);
    const first = component[0];
    if (first === undefined) continue;
    const targets = component.flatMap((path) => graph.successors.get(path) ?? []);
    const isLoop = component.length > 1 || targets.some((t) => t.kind === "node" && t.path === first);
    const leaves = targets.some((t) => t.kind === "exit" || !members.has(t.path));
    if (isLoop && !leaves) {
      const loop =
        component.length === 1
          ? `${first} only routes to itself`
          : `${component.join(", ")} only route to each other`;
      problems.push({ path: first, message: `loop with no way out: ${loop} and no edge leaves to an exit` });
    }
  }
}

function reachableFrom(graph: PathGraph, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    for (const next of graph.successors.get(path) ?? []) {
      if (next.kind === "node" && !seen.has(next.path)) {
        seen.add(next.path);
        queue.push(next.path);
      }
    }
  }
  return seen;
}

/** Tarjan's algorithm; components come out with their members in definition order. */
function stronglyConnected(graph: PathGraph): string[][] {
  const order = new Map(graph.paths.map((path, i) => [path, i]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  const visit = (path: string): void => {
    index.set(path, counter);
    low.set(path, counter);
    counter += 1;
    stack.push(path);
    onStack.add(path);
    for (const next of graph.successors.get(path) ?? []) {
      if (next.kind !== "node" || !order.has(next.path)) continue;
      if (!index.has(next.path)) {
        visit(next.path);
        low.set(path, Math.min(low.get(path) ?? 0, low.get(next.path) ?? 0));
      } else if (onStack.has(next.path)) {
        low.set(path, Math.min(low.get(path) ?? 0, index.get(next.path) ?? 0));
      }
    }
    if (low.get(path) !== index.get(path)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === path) break;
    }
    components.push(component.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)));
  };

  for (const path of graph.paths) if (!index.has(path)) visit(path);
  return components;
}
