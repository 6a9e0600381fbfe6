import type { CompileProblem } from "./compile-error.js";
import type { NextStep } from "./compiled-workflow.js";

/** The compiled graph over full node paths; exits are sinks. */
export interface PathGraph {
  /** Every node path, in definition order. */
  paths: readonly string[];
  successors: ReadonlyMap<string, readonly NextStep[]>;
  startPath?: string;
}

/** The graph over node numbers (definition order), for walks that run once per node. */
interface NumberedGraph {
  paths: readonly string[];
  /** For each node, the numbers of the nodes it can go to. */
  next: readonly (readonly number[])[];
  /** For each node, whether an edge leaves it to an exit (or to a path that names no node). */
  leavesGraph: readonly boolean[];
}

function numbered(graph: PathGraph): NumberedGraph {
  const numbers = new Map(graph.paths.map((path, i) => [path, i]));
  const next: number[][] = [];
  const leavesGraph: boolean[] = [];
  for (const path of graph.paths) {
    const targets: number[] = [];
    let leaves = false;
    for (const step of graph.successors.get(path) ?? []) {
      const target = step.kind === "node" ? numbers.get(step.path) : undefined;
      if (target === undefined) leaves = true;
      else targets.push(target);
    }
    next.push(targets);
    leavesGraph.push(leaves);
  }
  return { paths: graph.paths, next, leavesGraph };
}

/** Reports unreachable nodes and loops that no edge leaves (a strongly connected trap without an exit). */
export function checkGraph(graph: PathGraph, problems: CompileProblem[]): void {
  const nodes = numbered(graph);
  const start = graph.startPath === undefined ? -1 : graph.paths.indexOf(graph.startPath);
  if (start >= 0) {
    const reachable = reachableFrom(nodes, start);
    nodes.paths.forEach((path, i) => {
      if (reachable[i] === 0) problems.push({ path, message: "node is unreachable from the start" });
    });
  }
  for (const component of stronglyConnected(nodes)) {
    const first = component[0];
    if (first === undefined) continue;
    const members = new Set(component);
    const isLoop = component.length > 1 || (nodes.next[first] ?? []).includes(first);
    const leaves = component.some(
      (i) => nodes.leavesGraph[i] === true || (nodes.next[i] ?? []).some((t) => !members.has(t)),
    );
    if (isLoop && !leaves) {
      const names = component.map((i) => nodes.paths[i] as string);
      const loop =
        component.length === 1
          ? `${names[0]} only routes to itself`
          : `${namesOf(names)} only route to each other`;
      problems.push({
        path: names[0] as string,
        message: `loop with no way out: ${loop} and no edge leaves to an exit`,
      });
    }
  }
}

/** The first members of a loop by name: a generated loop may have thousands. */
function namesOf(component: readonly string[]): string {
  const shown = component.slice(0, 8).join(", ");
  return component.length > 8 ? `${shown} and ${component.length - 8} more` : shown;
}

/** 1 for every node reachable from `start`. */
function reachableFrom(graph: NumberedGraph, start: number): Uint8Array {
  const seen = new Uint8Array(graph.paths.length);
  seen[start] = 1;
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    for (const next of graph.next[queue[head] as number] ?? []) {
      if (seen[next] === 0) {
        seen[next] = 1;
        queue.push(next);
      }
    }
  }
  return seen;
}

/**
 * Tarjan's algorithm with an explicit stack of frames: a generated chain is far deeper than the call
 * stack. Components come out with their members in definition order.
 */
function stronglyConnected(graph: NumberedGraph): number[][] {
  const count = graph.paths.length;
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const components: number[][] = [];
  // The walk's frames: a node, and how many of its successors it has looked at.
  const frameNode: number[] = [];
  const frameNext: number[] = [];
  let counter = 0;

  const enter = (node: number): void => {
    index[node] = counter;
    low[node] = counter;
    counter += 1;
    stack.push(node);
    onStack[node] = 1;
    frameNode.push(node);
    frameNext.push(0);
  };

  for (let root = 0; root < count; root += 1) {
    if (index[root] !== -1) continue;
    enter(root);
    while (frameNode.length > 0) {
      const top = frameNode.length - 1;
      const node = frameNode[top] as number;
      const successors = graph.next[node] ?? [];
      const at = frameNext[top] as number;
      if (at < successors.length) {
        frameNext[top] = at + 1;
        const next = successors[at] as number;
        if (index[next] === -1) enter(next);
        else if (onStack[next] === 1) low[node] = Math.min(low[node] as number, index[next] as number);
        continue;
      }
      // Every successor is done: here the recursive version returns to its caller.
      frameNode.pop();
      frameNext.pop();
      const caller = frameNode[frameNode.length - 1];
      if (caller !== undefined) low[caller] = Math.min(low[caller] as number, low[node] as number);
      if (low[node] !== index[node]) continue;
      const component: number[] = [];
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack[member] = 0;
        component.push(member);
        if (member === node) break;
      }
      components.push(component.sort((a, b) => a - b));
    }
  }
  return components;
}
