import { type GraphManifest, groupState, type NodeView, type RunView } from "@piw/protocol";
import { type BranchView, branchIndex, branchView, enclosingBranches } from "./forks.js";
import type { NodeState } from "./words.js";

export type MountManifest = GraphManifest["mounts"][number];

/** An included child workflow as renderers show it: its state is derived from its nodes. */
interface MountView {
  path: string;
  workflow: string;
  title: string;
  state: NodeState;
  visits: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** One row of a flat rendering: a node, or the header of the include or the branch it sits in. */
export type FlowEntry =
  | { kind: "node"; node: NodeView; depth: number; branch: BranchView | undefined }
  | { kind: "mount"; mount: MountView; depth: number }
  | { kind: "branch"; branch: BranchView; depth: number };

function isInside(path: string, mountPath: string): boolean {
  return path.startsWith(`${mountPath}/`);
}

/** The mounts a node sits in, outermost first. */
export function enclosingMounts(path: string, mounts: readonly MountManifest[]): MountManifest[] {
  return mounts.filter((mount) => isInside(path, mount.path)).sort((a, b) => a.path.length - b.path.length);
}

/** A mount's state from its nodes: running or failing wins, untouched is pending, else succeeded. */
function mountView(mount: MountManifest, nodes: readonly NodeView[]): MountView {
  const inside = nodes.filter((node) => isInside(node.path, mount.path));
  const state = groupState(inside);
  // A loop, not Math.min(...list): a spread as long as the graph overflows the call stack.
  let startedAt: number | null = null;
  let finishedAt: number | null = null;
  for (const node of inside) {
    if (node.startedAt !== null) startedAt = Math.min(startedAt ?? node.startedAt, node.startedAt);
    if (node.finishedAt !== null) finishedAt = Math.max(finishedAt ?? node.finishedAt, node.finishedAt);
  }
  const entry = inside.find((node) => node.path === mount.startPath);
  return {
    path: mount.path,
    workflow: mount.workflow,
    title: mount.title,
    state,
    visits: entry?.visits ?? 0,
    startedAt,
    finishedAt: state === "running" ? null : finishedAt,
  };
}

/** The manifest's edges between nodes, as lists of targets per node. */
function successors(manifest: GraphManifest): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const edge of manifest.edges) {
    if (edge.to.kind !== "node") continue;
    const list = next.get(edge.from) ?? [];
    list.push(edge.to.path);
    next.set(edge.from, list);
  }
  return next;
}

/**
 * Node paths in the order the run flows: breadth first from the start along the edges, then any node
 * the edges never reach, then nodes the run visited that the manifest does not name. A parallel node
 * is followed by its branches, one after the other, each in its own flow order; then what follows its
 * join.
 */
export function flowOrder(manifest: GraphManifest, nodes: readonly NodeView[]): string[] {
  const known = new Set(nodes.map((node) => node.path));
  const next = successors(manifest);
  const refs = branchIndex(manifest);
  const forks = new Map((manifest.forks ?? []).map((fork) => [fork.path, fork]));
  // Which branch a node belongs to, innermost; "" for the root workflow.
  const homeOf = (path: string) =>
    refs.size === 0 ? "" : (enclosingBranches(path, refs).at(-1)?.prefix ?? "");
  // Each scope's nodes in the manifest's order, for the ones its edges never reach.
  const members = new Map<string, string[]>();
  for (const node of manifest.nodes) {
    const scope = homeOf(node.path);
    const list = members.get(scope) ?? [];
    list.push(node.path);
    members.set(scope, list);
  }
  const order: string[] = [];
  const seen = new Set<string>();
  /** One scope (the root or a branch) from `start`, breadth first, then its unreached nodes. */
  const walk = (start: string, scope: string): void => {
    const queue: string[] = [];
    if (known.has(start) && !seen.has(start) && homeOf(start) === scope) queue.push(start);
    seen.add(start);
    // An index, not shift(): shift is linear on a long queue.
    for (let head = 0; head < queue.length; head += 1) {
      const path = queue[head] as string;
      for (const to of next.get(path) ?? []) {
        if (seen.has(to) || !known.has(to) || homeOf(to) !== scope) continue;
        seen.add(to);
        queue.push(to);
      }
    }
    for (const path of members.get(scope) ?? []) {
      if (seen.has(path) || !known.has(path)) continue;
      seen.add(path);
      queue.push(path);
    }
    for (const path of queue) {
      order.push(path);
      const fork = forks.get(path);
      if (fork !== undefined)
        for (const branch of fork.branches) walk(branch.startPath, `${fork.path}/${branch.name}/`);
    }
  };
  walk(manifest.startPath, "");
  for (const node of nodes) {
    if (seen.has(node.path)) continue;
    seen.add(node.path);
    order.push(node.path);
  }
  return order;
}

/**
 * The run's nodes in flow order, each include and each parallel branch announced by a header row
 * before its first node; a node's depth counts the includes and branches around it.
 */
export function flowEntries(view: Pick<RunView, "manifest" | "nodes">): FlowEntry[] {
  const byPath = new Map(view.nodes.map((node) => [node.path, node]));
  const refs = branchIndex(view.manifest);
  const branches = new Map<string, BranchView>();
  const opened = new Set<string>();
  const entries: FlowEntry[] = [];
  for (const path of flowOrder(view.manifest, view.nodes)) {
    const node = byPath.get(path);
    if (!node) continue;
    // Includes and branches around the node, outermost (shortest path) first.
    const groups: Array<{ at: string; open: () => FlowEntry & { kind: "mount" | "branch" } }> = [
      ...enclosingMounts(path, view.manifest.mounts).map((mount) => ({
        at: `${mount.path}/`,
        open: () => ({ kind: "mount" as const, mount: mountView(mount, view.nodes), depth: 0 }),
      })),
      ...enclosingBranches(path, refs).map((ref) => ({
        at: ref.prefix,
        open: () => {
          const branch = branchView(ref, view);
          branches.set(ref.prefix, branch);
          return { kind: "branch" as const, branch, depth: 0 };
        },
      })),
    ].sort((a, b) => a.at.length - b.at.length);
    groups.forEach((group, depth) => {
      if (opened.has(group.at)) return;
      opened.add(group.at);
      entries.push({ ...group.open(), depth });
    });
    const inner = enclosingBranches(path, refs).at(-1);
    const branch = inner === undefined ? undefined : branches.get(inner.prefix);
    entries.push({ kind: "node", node, depth: groups.length, branch });
  }
  return entries;
}

/** The node the run is at: the running node, else the current work's node, else the cursor. */
export function activePath(view: Pick<RunView, "nodes" | "currentWork" | "cursor">): string | null {
  const running = view.nodes.find((node) => node.state === "running");
  if (running) return running.path;
  const work = view.currentWork;
  if (
    (work.kind === "worker" || work.kind === "turn" || work.kind === "waiting_for_model") &&
    work.path !== null
  )
    return work.path;
  return view.cursor?.path ?? null;
}
