import {
  branchState,
  type GraphManifest,
  joinEnds,
  MAP_ITEM_SEGMENT,
  type ManifestFork,
  type NodeView,
  type RunView,
} from "@piw/protocol";
import type { NodeState } from "./words.js";

/** One branch of one parallel node, with the path prefix its nodes share (`<fork>/<branch>/`). */
export interface BranchRef {
  fork: ManifestFork;
  branch: ManifestFork["branches"][number];
  prefix: string;
}

/**
 * What views call a branch: its name, or for an item of a map node `<map>[<index>]` (its title in
 * the run view's manifest), so `review[0]` never reads as a branch named `0`. A map none of whose
 * items has started shows its one template branch as `<map>[*]`.
 */
export function branchLabel(
  fork: Pick<ManifestFork, "map" | "path">,
  branch: ManifestFork["branches"][number],
): string {
  if (fork.map !== true) return branch.name;
  if (branch.name !== MAP_ITEM_SEGMENT) return branch.title;
  return `${fork.path.slice(fork.path.lastIndexOf("/") + 1)}[*]`;
}

/** One parallel node's branches, in the order the workflow lists them. */
export function forkBranches(fork: ManifestFork): BranchRef[] {
  return fork.branches.map((branch) => ({ fork, branch, prefix: `${fork.path}/${branch.name}/` }));
}

/** Every branch of the manifest's parallel nodes, found by its path prefix. */
export type BranchIndex = ReadonlyMap<string, BranchRef>;

export function branchIndex(manifest: Pick<GraphManifest, "forks">): BranchIndex {
  const index = new Map<string, BranchRef>();
  for (const fork of manifest.forks ?? []) for (const ref of forkBranches(fork)) index.set(ref.prefix, ref);
  return index;
}

/**
 * The branches a node sits in, outermost first; none for a node outside every parallel node. Only
 * the path's own folders are looked up, so a large graph with many branches stays cheap.
 */
export function enclosingBranches(path: string, index: BranchIndex): BranchRef[] {
  const inside: BranchRef[] = [];
  if (index.size === 0) return inside;
  for (let cut = path.indexOf("/"); cut >= 0; cut = path.indexOf("/", cut + 1)) {
    const ref = index.get(path.slice(0, cut + 1));
    if (ref !== undefined) inside.push(ref);
  }
  return inside;
}

/** The node's path inside its innermost branch: `review/lint/run` → `run`. */
export function localPath(path: string, index: BranchIndex): string {
  const ref = enclosingBranches(path, index).at(-1);
  return ref === undefined ? path : path.slice(ref.prefix.length);
}

/** A branch as renderers show it: its state from its nodes, and the nodes running in it now. */
export interface BranchView {
  forkPath: string;
  name: string;
  title: string;
  /** What renderers print for it (branchLabel). */
  label: string;
  state: NodeState;
  nodes: NodeView[];
  running: NodeView[];
}

export function branchView(ref: BranchRef, view: Pick<RunView, "nodes" | "manifest">): BranchView {
  const inside = view.nodes.filter((node) => node.path.startsWith(ref.prefix));
  const fork = view.nodes.find((node) => node.path === ref.fork.path);
  return {
    forkPath: ref.fork.path,
    name: ref.branch.name,
    title: ref.branch.title,
    label: branchLabel(ref.fork, ref.branch),
    state: branchState(inside, fork, joinEnds(view.manifest)),
    nodes: inside,
    running: inside.filter((node) => node.state === "running"),
  };
}

/** How branches' states read when they are counted together: `2 running, 1 pending`. */
export function branchCounts(branches: readonly Pick<BranchView, "state">[]): string {
  const counts = new Map<NodeState, number>();
  for (const branch of branches) counts.set(branch.state, (counts.get(branch.state) ?? 0) + 1);
  const order: NodeState[] = [
    "running",
    "failed",
    "timed_out",
    "cancelled",
    "paused",
    "succeeded",
    "pending",
  ];
  return order
    .filter((state) => (counts.get(state) ?? 0) > 0)
    .map((state) => `${counts.get(state)} ${state.replace("_", " ")}`)
    .join(", ");
}

/**
 * Which branches to show when only `room` fit: running ones first, then failed ones, then the rest,
 * each in the manifest's order; returned in the manifest's order. With room for all, all of them.
 */
export function branchesToShow<T extends Pick<BranchView, "state">>(
  branches: readonly T[],
  room: number,
): T[] {
  if (branches.length <= room) return [...branches];
  const rank = (state: NodeState) =>
    state === "running" ? 0 : state === "failed" || state === "timed_out" ? 1 : 2;
  const chosen = new Set(
    branches
      .map((branch, i) => ({ i, rank: rank(branch.state) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .slice(0, Math.max(0, room))
      .map((entry) => entry.i),
  );
  return branches.filter((_, i) => chosen.has(i));
}

/** How a parallel node's join is met: `join: at least 2 of 3 branches, 2 at a time`. */
export function joinWords(fork: ManifestFork): string {
  const count = fork.branches.length;
  let join: string;
  switch (fork.join.kind) {
    case "all":
      join = `all of ${count} branches`;
      break;
    case "any":
      join = `any of ${count} branches`;
      break;
    case "atLeast":
      join = `at least ${fork.join.count} of ${count} branches`;
      break;
    default:
      return fork.join satisfies never;
  }
  return `join: ${join}${fork.concurrency === null ? "" : `, ${fork.concurrency} at a time`}`;
}
