import { MAP_ITEM_SEGMENT } from "./map-paths.js";

/**
 * Where a map visit's saved list sits among the outputs by path while its branches run:
 * `<map>/each`, which no node's path can be (an item's segment is its index).
 */
export function mapItemsKey(mapPath: string): string {
  return `${mapPath}/${MAP_ITEM_SEGMENT}`;
}

/** The item a map branch's scope (`review/3`) runs over, from its map's saved list. */
export function mapItemOf(outputsByPath: ReadonlyMap<string, unknown>, branchScope: string): unknown {
  const cut = branchScope.lastIndexOf("/");
  const items = outputsByPath.get(mapItemsKey(branchScope.slice(0, cut)));
  return Array.isArray(items) ? items[Number(branchScope.slice(cut + 1))] : undefined;
}
