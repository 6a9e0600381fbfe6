import type { GraphManifest, ManifestFork, ManifestTarget } from "./graph-manifest.js";
import { concreteOf, MAP_INDEX_LIMIT, MAP_ITEM_SEGMENT, templateOf } from "./map-paths.js";
import type { ErrorCode } from "./safe-error.js";

type Tuple = readonly number[];

/** The managed effect type a map visit's list is saved under, before any branch starts: a crash retry reads it back. */
export const MAP_ITEMS_EFFECT = "map.items";

/** The codes a map visit fails with when its list is refused: no branch of that visit ran. */
export const MAP_LIST_ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  "map_items_invalid",
  "map_too_many_items",
  "map_too_few_items",
  "map_item_invalid",
]);

/** The saved list of a map visit at a concrete map path (`fan`, `fan/2/inner`): how many items it has. */
export interface SavedMapList {
  path: string;
  items: number;
}

/** The map templates a template path sits under, outermost first: `a/each/b/each/x` → `a`, `a/each/b`. */
function mapsAbove(path: string, maps: ReadonlySet<string>): string[] {
  const above: string[] = [];
  let prefix = "";
  for (const segment of path.split("/")) {
    if (prefix !== "" && maps.has(prefix) && segment === MAP_ITEM_SEGMENT) above.push(prefix);
    prefix = prefix === "" ? segment : `${prefix}/${segment}`;
  }
  return above;
}

/**
 * The item index tuples seen of each map template, from the visited paths: `fan/2/read` gives
 * `fan` the tuple [2]; a map nested in its branch gets the outer index first.
 */
function seenTuples(
  paths: Iterable<string>,
  lists: Iterable<SavedMapList>,
  maps: ReadonlySet<string>,
): Map<string, Map<string, Tuple>> {
  const seen = new Map<string, Map<string, Tuple>>();
  const see = (map: string, tuple: Tuple) => {
    const byKey = seen.get(map) ?? new Map<string, Tuple>();
    byKey.set(tuple.join("/"), tuple);
    seen.set(map, byKey);
  };
  for (const path of paths) {
    const resolved = templateOf(path, maps);
    if (resolved === undefined || resolved.indices.length === 0) continue;
    mapsAbove(resolved.template, maps).forEach((map, depth) => {
      see(map, resolved.indices.slice(0, depth + 1));
    });
  }
  // A saved list names every item of its visit, those not started yet too.
  for (const list of lists) {
    const resolved = templateOf(list.path, maps);
    if (resolved === undefined || !maps.has(resolved.template)) continue;
    const count = Math.min(list.items, MAP_INDEX_LIMIT);
    for (let i = 0; i < count; i += 1) see(resolved.template, [...resolved.indices, i]);
  }
  for (const byKey of seen.values()) {
    const sorted = [...byKey.entries()].sort(([, a], [, b]) => compareTuples(a, b));
    byKey.clear();
    for (const [key, tuple] of sorted) byKey.set(key, tuple);
  }
  return seen;
}

function compareTuples(a: Tuple, b: Tuple): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  }
  return a.length - b.length;
}

/** The tuples seen of `map` that extend `outer` by one index: the items of that instance of it. */
function itemsOf(seen: Map<string, Map<string, Tuple>>, map: string, outer: Tuple): Tuple[] {
  return [...(seen.get(map)?.values() ?? [])].filter(
    (t) => t.length === outer.length + 1 && outer.every((v, i) => t[i] === v),
  );
}

/**
 * The instances of a template path: one per tuple seen of its innermost map; an instance of a map
 * above it with no item seen yet keeps the rest of the path as the template.
 */
function tuplesFor(
  template: string,
  maps: ReadonlySet<string>,
  seen: Map<string, Map<string, Tuple>>,
): Tuple[] {
  let tuples: Tuple[] = [[]];
  mapsAbove(template, maps).forEach((map, depth) => {
    tuples = tuples.flatMap((outer) => {
      if (outer.length < depth) return [outer];
      const inner = itemsOf(seen, map, outer);
      return inner.length === 0 ? [outer] : inner;
    });
  });
  return tuples;
}

function fillTarget(to: ManifestTarget, tuple: Tuple, maps: ReadonlySet<string>): ManifestTarget {
  return to.kind === "exit" ? to : { ...to, path: concreteOf(to.path, tuple, maps) };
}

/**
 * A run's manifest as views draw it: each map node's template branch (`<map>/each/...`) replaced by
 * one branch per item, `<map>/0/...`, `<map>/1/...`, each titled `<map>[<index>]`: the items of its
 * saved lists, started or not, and any item a visit ran. A map with no saved list and no item
 * visited keeps its template branch, so the graph still shows its shape.
 */
export function instantiateMapBranches(
  manifest: GraphManifest,
  visitedPaths: Iterable<string>,
  savedLists: Iterable<SavedMapList> = [],
): GraphManifest {
  const maps = new Set((manifest.forks ?? []).flatMap((f) => (f.map ? [f.path] : [])));
  if (maps.size === 0) return manifest;
  const seen = seenTuples(visitedPaths, savedLists, maps);
  const copies = <T>(template: string, make: (tuple: Tuple, fill: (p: string) => string) => T): T[] =>
    tuplesFor(template, maps, seen).map((tuple) => make(tuple, (p) => concreteOf(p, tuple, maps)));

  const nodes = manifest.nodes.flatMap((node) =>
    copies(node.path, (_, fill) => ({ ...node, path: fill(node.path), scope: fill(node.scope) })),
  );
  const mounts = manifest.mounts.flatMap((mount) =>
    copies(mount.path, (_, fill) => ({
      ...mount,
      path: fill(mount.path),
      scope: fill(mount.scope),
      startPath: fill(mount.startPath),
    })),
  );
  const edges = manifest.edges.flatMap((edge) =>
    copies(edge.from, (tuple, fill) => ({
      ...edge,
      from: fill(edge.from),
      to: fillTarget(edge.to, tuple, maps),
    })),
  );
  const forks = (manifest.forks ?? []).flatMap((fork) =>
    copies(fork.path, (tuple, fill): ManifestFork => {
      const path = fill(fork.path);
      const branches = fork.branches.map((b) => ({ ...b, startPath: fill(b.startPath) }));
      if (!fork.map) return { ...fork, path, branches };
      const template = fork.branches[0];
      const items = itemsOf(seen, fork.path, tuple);
      if (template === undefined || items.length === 0) return { ...fork, path, branches };
      const name = path.slice(path.lastIndexOf("/") + 1);
      return {
        ...fork,
        path,
        branches: items.map((t) => {
          const index = t.at(-1) as number;
          return {
            name: String(index),
            title: `${name}[${index}]`,
            startPath: concreteOf(template.startPath, t, maps),
          };
        }),
      };
    }),
  );
  return { ...manifest, nodes, mounts, edges, forks };
}
