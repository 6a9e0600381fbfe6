import { concreteOf, templateOf } from "@piw/protocol";
import type { CompiledNode } from "./compiled-workflow.js";

export { MAP_ITEM_SEGMENT } from "@piw/protocol";

/** A node of a template as one item's branch runs it: its paths filled in, its item index set. */
function instantiate(
  node: CompiledNode,
  indices: readonly number[],
  maps: ReadonlySet<string>,
): CompiledNode {
  const fill = (template: string) => concreteOf(template, indices, maps);
  const base = {
    path: fill(node.path),
    scope: fill(node.scope),
    lane: fill(node.lane),
    mapIndex: indices.at(-1) as number,
  };
  switch (node.kind) {
    case "parallel":
      return {
        ...node,
        ...base,
        branches: node.branches.map((b) => ({ ...b, scope: fill(b.scope), startPath: fill(b.startPath) })),
      };
    case "map":
      return {
        ...node,
        ...base,
        branch: { ...node.branch, scope: fill(node.branch.scope), startPath: fill(node.branch.startPath) },
      };
    default:
      return { ...node, ...base };
  }
}

/**
 * The compiled nodes by full path: iterating gives the templates, `get` and `has` take the path of a
 * visit (`review/3/read`) and give the node as that item's branch runs it.
 */
export class InstancedNodes extends Map<string, CompiledNode> {
  private readonly instances = new Map<string, CompiledNode>();

  constructor(
    templates: ReadonlyMap<string, CompiledNode>,
    private readonly maps: ReadonlySet<string>,
  ) {
    super(templates);
  }

  override get(path: string): CompiledNode | undefined {
    if (this.maps.size === 0) return super.get(path);
    const cached = this.instances.get(path);
    if (cached !== undefined) return cached;
    const resolved = templateOf(path, this.maps);
    if (resolved === undefined) return undefined;
    const template = super.get(resolved.template);
    if (template === undefined || resolved.indices.length === 0) return template;
    const node = instantiate(template, resolved.indices, this.maps);
    this.instances.set(path, node);
    return node;
  }

  override has(path: string): boolean {
    return this.get(path) !== undefined;
  }
}
