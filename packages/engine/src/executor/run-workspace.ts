import { isAbsolute } from "node:path";
import type { CompiledNode, CompiledWorkflow } from "../compiler/compiled-workflow.js";

// Where a node's commands and isolated sessions run: the workspace a `workspace()` node of its own
// scope or an enclosing one prepared, rebuilt from saved outputs alone so a resumed or continued run
// (whose worker starts in the run's folder) lands in the same place.

const workspaceNodes = new WeakMap<CompiledWorkflow, readonly CompiledNode[]>();

function workspacesOf(workflow: CompiledWorkflow): readonly CompiledNode[] {
  let found = workspaceNodes.get(workflow);
  if (found === undefined) {
    found = [...workflow.nodes.values()].filter((n) => n.kind === "action" && n.workspace);
    workspaceNodes.set(workflow, found);
  }
  return found;
}

function encloses(scope: string, inner: string): boolean {
  return scope === "" || scope === inner || inner.startsWith(`${scope}/`);
}

/**
 * The folder of the innermost settled workspace around `node` (the deepest enclosing scope wins, so
 * an included workflow's own workspace applies to its nodes), or null when there is none.
 */
export function runWorkspace(
  workflow: CompiledWorkflow,
  node: CompiledNode,
  outputsByPath: ReadonlyMap<string, unknown>,
): string | null {
  let best: { depth: number; path: string } | null = null;
  for (const candidate of workspacesOf(workflow)) {
    if (!encloses(candidate.scope, node.scope)) continue;
    const output = outputsByPath.get(candidate.path);
    const path = (output as { path?: unknown } | null | undefined)?.path;
    if (typeof path !== "string" || !isAbsolute(path)) continue;
    const depth = candidate.scope === "" ? 0 : candidate.scope.split("/").length;
    if (best === null || depth >= best.depth) best = { depth, path };
  }
  return best?.path ?? null;
}
