import type { GraphManifest, ManifestFork } from "./graph-manifest.js";
import type { NodeView } from "./run-view.js";

// A fork's branches as a run view shows them, from the view's own nodes: the host counts a map's
// ended items with these, and every renderer draws branch states with them, so the two agree.

type State = NodeView["state"];
type NodeFacts = Pick<NodeView, "path" | "state" | "visits" | "startedAt">;

/**
 * The state of a group of nodes (an include, a branch): running or failing wins, untouched is
 * pending, else succeeded.
 */
export function groupState(inside: readonly Pick<NodeView, "state" | "visits">[]): State {
  const has = (state: State) => inside.some((node) => node.state === state);
  if (has("running")) return "running";
  if (has("failed")) return "failed";
  if (has("timed_out")) return "timed_out";
  if (has("cancelled")) return "cancelled";
  if (inside.every((node) => node.visits === 0)) return "pending";
  return "succeeded";
}

/** The nodes whose edge ends a branch at its join. */
export function joinEnds(manifest: Pick<GraphManifest, "edges">): ReadonlySet<string> {
  const ends = new Set<string>();
  for (const edge of manifest.edges) if (edge.to.kind === "join") ends.add(edge.from);
  return ends;
}

/**
 * A branch's state from its nodes. It succeeded only once a node that ends it at the join did; a
 * branch part of the way through runs on while its fork runs, and was cut short (cancelled) when
 * its fork's join was met without it.
 */
export function branchState(
  inside: readonly NodeFacts[],
  fork: Pick<NodeView, "state"> | undefined,
  ends: ReadonlySet<string>,
): State {
  const state = groupState(inside);
  if (state !== "succeeded" || inside.some((node) => ends.has(node.path) && node.state === "succeeded"))
    return state;
  if (fork === undefined || fork.state === "running") return "running";
  return fork.state === "succeeded" ? "cancelled" : fork.state;
}

/**
 * How many of a fork's branches have ended (succeeded, failed, timed out or cancelled) in its
 * current visit, as the view's nodes show them: what a map node's progress counts. A node whose
 * latest visit started before the fork's did belongs to an earlier visit of the fork (a loop): it
 * counts as not started yet.
 */
export function endedBranches(
  fork: Pick<ManifestFork, "path" | "branches">,
  nodes: readonly NodeFacts[],
  ends: ReadonlySet<string>,
): number {
  // One pass over the nodes, each to its branch by the path segment after the fork's.
  const under = `${fork.path}/`;
  const forkNode = nodes.find((node) => node.path === fork.path);
  const since = forkNode?.startedAt ?? null;
  const byBranch = new Map<string, NodeFacts[]>();
  for (const node of nodes) {
    if (!node.path.startsWith(under)) continue;
    if (since !== null && (node.startedAt === null || node.startedAt < since)) continue;
    const cut = node.path.indexOf("/", under.length);
    if (cut < 0) continue;
    const name = node.path.slice(under.length, cut);
    const inside = byBranch.get(name);
    if (inside) inside.push(node);
    else byBranch.set(name, [node]);
  }
  let ended = 0;
  for (const branch of fork.branches) {
    const state = branchState(byBranch.get(branch.name) ?? [], forkNode, ends);
    if (state !== "running" && state !== "pending" && state !== "paused") ended += 1;
  }
  return ended;
}
