/**
 * The segment that stands for the item's index in a map node's compiled branch. The branch is
 * compiled once, at `<map>/each/...`; item 3 runs it at `<map>/3/...`, so its visits, outputs and
 * effects never meet another item's. Only digits name an item, so no index is ever `each`.
 */
export const MAP_ITEM_SEGMENT = "each";

const INDEX = /^(0|[1-9][0-9]{0,3})$/;

/** How many items a path segment can name: indices have at most four digits. */
export const MAP_INDEX_LIMIT = 10_000;

/** A path under map branches, resolved: its template and the item index of each map it is under. */
export interface MapInstance {
  template: string;
  indices: readonly number[];
}

/**
 * `review/3/read` → `{ template: "review/each/read", indices: [3] }`. A path with no map above it
 * is its own template; undefined for a segment under a map that is not an index (a template path).
 */
export function templateOf(path: string, maps: ReadonlySet<string>): MapInstance | undefined {
  if (maps.size === 0 || path === "") return { template: path, indices: [] };
  const indices: number[] = [];
  let template = "";
  for (const segment of path.split("/")) {
    if (template !== "" && maps.has(template)) {
      if (!INDEX.test(segment)) return undefined;
      indices.push(Number(segment));
      template = `${template}/${MAP_ITEM_SEGMENT}`;
    } else {
      template = template === "" ? segment : `${template}/${segment}`;
    }
  }
  return { template, indices };
}

/**
 * The template path with its map segments filled from `indices`, outermost first; a map segment
 * past the given indices stays `each` (the template of a map nested in the branch).
 */
export function concreteOf(template: string, indices: readonly number[], maps: ReadonlySet<string>): string {
  if (indices.length === 0 || template === "") return template;
  let at = 0;
  let prefix = "";
  const out: string[] = [];
  for (const segment of template.split("/")) {
    const underMap = prefix !== "" && maps.has(prefix) && segment === MAP_ITEM_SEGMENT;
    prefix = prefix === "" ? segment : `${prefix}/${segment}`;
    out.push(underMap && at < indices.length ? String(indices[at++]) : segment);
  }
  return out.join("/");
}
