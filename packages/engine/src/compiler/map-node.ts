import type { CompiledMapNode, ScopeContext } from "./compiled-workflow.js";
import { joinPath } from "./names.js";
import { MAP_ITEM_SEGMENT } from "./map-paths.js";
import { type BranchScope, branchScopeOf, joinOf, recordOf } from "./parallel-node.js";

type Fields = Record<string, unknown>;
type Check = (message: string) => void;

/** How many branches of a map run at once when it does not say. */
const DEFAULT_MAP_CONCURRENCY = 4;
/** The longest list a map accepts when it does not say, and the most it may allow. */
const DEFAULT_MAP_MAX_ITEMS = 100;
const MAP_MAX_ITEMS_LIMIT = 1000;

interface MapPlace {
  path: string;
  name: string;
  scope: string;
  lane: string;
  title: string;
}

function boundedInteger(
  value: unknown,
  fallback: number,
  most: number,
  message: string,
  problem: Check,
): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= most) return value;
  problem(message);
  return undefined;
}

/** The item reaches the branch as its input; an include's projection maps it first. */
const itemInput = (ctx: ScopeContext) => ctx.input;

/**
 * The map's template branch as a scope to collect: at `<map>/each`, its input the item. A single
 * node as the branch is named after the map node (`review/0/review`).
 */
export function mapBranchScopeOf(f: Fields, name: string, problem: Check): BranchScope | undefined {
  const branch = branchScopeOf(name, f.branch, (message) =>
    problem(message.replace(`branch "${name}"`, "the branch")),
  );
  if (branch === undefined) return undefined;
  const projected = recordOf(f.branch)?.kind === "include";
  return projected ? branch : { ...branch, include: { ...branch.include, input: itemInput } };
}

/** Validates a map node and returns it compiled (its branch's start path is filled in later). */
export function compileMap(f: Fields, base: MapPlace, problem: Check): CompiledMapNode | undefined {
  const over = f.over;
  if (typeof over !== "function") {
    problem("over must be a function of the scope ({ input, outputs }) that returns the list of items");
  }
  const maxItems = boundedInteger(
    f.maxItems,
    DEFAULT_MAP_MAX_ITEMS,
    MAP_MAX_ITEMS_LIMIT,
    `maxItems must be an integer from 1 to ${MAP_MAX_ITEMS_LIMIT} (the longest list the map accepts)`,
    problem,
  );
  const concurrency = boundedInteger(
    f.concurrency,
    DEFAULT_MAP_CONCURRENCY,
    Number.MAX_SAFE_INTEGER,
    "concurrency must be an integer of at least 1 (how many branches run at once)",
    problem,
  );
  const join =
    f.join === undefined
      ? { kind: "all" as const }
      : joinOf(f.join, maxItems ?? MAP_MAX_ITEMS_LIMIT, problem, "maxItems");
  const branch = mapBranchScopeOf(f, base.name, problem);
  if (typeof over !== "function" || maxItems === undefined || concurrency === undefined) return undefined;
  if (join === undefined || branch === undefined) return undefined;
  const scope = joinPath(base.path, MAP_ITEM_SEGMENT);
  const compiled: CompiledMapNode = {
    kind: "map",
    ...base,
    over: over as CompiledMapNode["over"],
    branch: { name: MAP_ITEM_SEGMENT, title: branch.title, scope, startPath: "" },
    join,
    concurrency,
    maxItems,
  };
  return compiled;
}
