import { canonicalJson } from "@piw/protocol";
import type { WorkflowDefinition } from "../authoring/define-workflow.js";
import type { CompiledNode } from "./compiled-workflow.js";
import type { GraphManifest } from "./graph-manifest.js";
import { type ResolvedTarget, resolveAllTargets, startPathOf } from "./graph-routing.js";
import { joinPath } from "./names.js";
import { outcomeEdgesOf } from "./outcome-routes.js";
import { edgeLabel, edgeTargets, type ScopeModel } from "./scope-model.js";

type Scopes = ReadonlyMap<string, ScopeModel>;
type ManifestEdge = GraphManifest["edges"][number];

/** Every edge leaving each node, resolved to full paths and root exits, in definition order. */
export function resolvedEdges(scopes: Scopes): Map<string, (ResolvedTarget & { label?: string })[]> {
  const bySource = new Map<string, (ResolvedTarget & { label?: string })[]>();
  for (const scope of scopes.values()) {
    for (const name of scope.nodeNames) {
      const edge = scope.edges.get(name);
      const resolved = edge
        ? edgeTargets(edge).flatMap((target) => {
            const label = edgeLabel(edge, target);
            return resolveAllTargets(scopes, scope.path, target).map((r) => ({ ...r, label }));
          })
        : [];
      // Outcome routes are edges too: the graph draws them and their targets are reachable.
      for (const { target, label } of outcomeEdgesOf(scope, name)) {
        resolved.push(...resolveAllTargets(scopes, scope.path, target).map((r) => ({ ...r, label })));
      }
      bySource.set(joinPath(scope.path, name), resolved);
    }
  }
  return bySource;
}

/** The JSON graph the host stores and viewers draw, without any workflow code. */
export function buildManifest(
  root: WorkflowDefinition,
  scopes: Scopes,
  nodes: ReadonlyMap<string, CompiledNode>,
  startPath: string,
  resolved: ReturnType<typeof resolvedEdges>,
): GraphManifest {
  const edges: ManifestEdge[] = [];
  for (const [from, targets] of resolved) {
    // Only edges from the same source can be equal.
    const seen = new Set<string>();
    for (const { to, via, label } of targets) {
      const edge: ManifestEdge = { from, to };
      if (label !== undefined && label !== "") edge.label = label;
      if (via.length > 0) edge.via = via;
      const key = targets.length === 1 ? "" : canonicalJson(edge);
      if (!seen.has(key)) edges.push(edge);
      seen.add(key);
    }
  }
  const mounts: GraphManifest["mounts"] = [];
  for (const scope of scopes.values()) {
    if (scope.parent === undefined || scope.parent.fork !== undefined) continue;
    const { definition, parent } = scope;
    mounts.push({
      path: scope.path,
      name: parent.mount,
      scope: parent.scope,
      workflow: definition.name,
      title: parent.include.title ?? definition.title ?? parent.mount,
      startPath: startPathOf(scopes, scope.path) ?? scope.path,
      exits: [...scope.exits],
    });
  }
  const manifest: GraphManifest = {
    version: 1,
    workflow: root.name,
    startPath,
    exits: [...(scopes.get("")?.exits ?? [])],
    maxSteps: root.maxSteps,
    nodes: [...nodes.values()].map((node) => {
      const { path, name, scope, kind, title } = node;
      return node.kind === "checkpoint"
        ? { path, name, scope, kind, title, answeredBy: node.answeredBy }
        : { path, name, scope, kind, title };
    }),
    mounts,
    edges,
  };
  const forks = forksOf(nodes);
  if (forks.length > 0) manifest.forks = forks;
  if (root.title !== undefined) manifest.title = root.title;
  return manifest;
}

/** The parallel and map nodes, with their joins and branches; the fork-to-branch edges come from these. */
function forksOf(nodes: ReadonlyMap<string, CompiledNode>): NonNullable<GraphManifest["forks"]> {
  const forks: NonNullable<GraphManifest["forks"]> = [];
  for (const node of nodes.values()) {
    if (node.kind === "map") {
      const { name, title, startPath } = node.branch;
      const { path, join, concurrency } = node;
      forks.push({ path, join, concurrency, branches: [{ name, title, startPath }], map: true });
    }
    if (node.kind !== "parallel") continue;
    forks.push({
      path: node.path,
      join: node.join,
      concurrency: node.concurrency,
      branches: node.branches.map(({ name, title, startPath }) => ({ name, title, startPath })),
    });
  }
  return forks;
}
