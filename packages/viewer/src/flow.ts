import type { GraphManifest, NodeView, RunView } from "@piw/protocol";
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

/** One row of a flat rendering: a node, or the header of the include it sits in. */
export type FlowEntry =
  | { kind: "node"; node: NodeView; depth: number }
  | { kind: "mount"; mount: MountView; depth: number };

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
  const has = (state: NodeState) => inside.some((node) => node.state === state);
  let state: NodeState = "succeeded";
  if (has("running")) state = "running";
  else if (has("failed")) state = "failed";
  else if (has("timed_out")) state = "timed_out";
  else if (inside.every((node) => node.visits === 0)) state = "pending";
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

/**
 * Node paths in the order the run flows: breadth first from the start along the edges, then any node
 * the edges never reach, then nodes the run visited that the manifest does not name.
 */
export function flowOrder(manifest: GraphManifest, nodes: readonly NodeView[]): string[] {
  const known = new Set(nodes.map((node) => node.path));
  const next = new Map<string, string[]>();
  for (const edge of manifest.edges) {
    if (edge.to.kind !== "node") continue;
    const list = next.get(edge.from) ?? [];
    list.push(edge.to.path);
    next.set(edge.from, list);
  }
  const order: string[] = [];
  const seen = new Set<string>();
  const queue = known.has(manifest.startPath) ? [manifest.startPath] : [];
  seen.add(manifest.startPath);
  // An index, not shift(): shift is linear on a long queue.
  for (let head = 0; head < queue.length; head += 1) {
    const path = queue[head] as string;
    order.push(path);
    for (const to of next.get(path) ?? []) {
      if (seen.has(to) || !known.has(to)) continue;
      seen.add(to);
      queue.push(to);
    }
  }
  for (const node of manifest.nodes) {
    if (seen.has(node.path) || !known.has(node.path)) continue;
    seen.add(node.path);
    order.push(node.path);
  }
  for (const node of nodes) {
    if (seen.has(node.path)) continue;
    seen.add(node.path);
    order.push(node.path);
  }
  return order;
}

/** The run's nodes in flow order, each include announced by a header row before its first node. */
export function flowEntries(view: Pick<RunView, "manifest" | "nodes">): FlowEntry[] {
  const byPath = new Map(view.nodes.map((node) => [node.path, node]));
  const opened = new Set<string>();
  const entries: FlowEntry[] = [];
  for (const path of flowOrder(view.manifest, view.nodes)) {
    const node = byPath.get(path);
    if (!node) continue;
    const mounts = enclosingMounts(path, view.manifest.mounts);
    mounts.forEach((mount, depth) => {
      if (opened.has(mount.path)) return;
      opened.add(mount.path);
      entries.push({ kind: "mount", mount: mountView(mount, view.nodes), depth });
    });
    entries.push({ kind: "node", node, depth: mounts.length });
  }
  return entries;
}

/** The node the run is at: the running node, else the current work's node, else the cursor. */
export function activePath(view: Pick<RunView, "nodes" | "currentWork" | "cursor">): string | null {
  const running = view.nodes.find((node) => node.state === "running");
  if (running) return running.path;
  const work = view.currentWork;
  if (work.kind !== "none" && work.path !== null) return work.path;
  return view.cursor?.path ?? null;
}
