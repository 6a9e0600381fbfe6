import { MAP_ITEMS_EFFECT, type SafeError, safeError } from "@piw/protocol";
import type { CompiledBranch, CompiledMapNode } from "../compiler/compiled-workflow.js";
import { mapItemsKey } from "../compiler/map-items.js";
import { ScopeInputError } from "../compiler/runtime-errors.js";
import { NodeFailure } from "./execution-signals.js";
import { joinNeeds } from "./join-policy.js";
import { effectsFor } from "./node-runner.js";
import type { Execution, Lane } from "./visit-sequence.js";

/** The most JSON a map's list may take when saved; a longer list fails the node. */
const MAP_ITEMS_MAX_BYTES = 256 * 1024;
const MAX_ITEM_DEPTH = 64;

/** A map visit's branches, one per saved item; or why the list fails the node. */
export type MapList = { kind: "branches"; branches: CompiledBranch[] } | { kind: "failed"; error: SafeError };

/**
 * Whether JSON keeps `value` as it is: no function, symbol, bigint, NaN or class instance (a Date
 * would turn into a string). A property that is `undefined` is left out when saved, as JSON does.
 */
function isJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (depth >= MAX_ITEM_DEPTH || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.every((v) => isJson(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((v) => v === undefined || isJson(v, depth + 1));
}

/**
 * The list `over` returned, checked, as JSON saves it: the first run's branches see exactly what a
 * crash retry reads back. The errors name counts and sizes, never an item.
 */
function checkedItems(node: CompiledMapNode, list: unknown): unknown[] {
  if (!Array.isArray(list)) {
    const thenable = typeof (list as { then?: unknown } | null)?.then === "function";
    const got = thenable
      ? "a promise: over must return the list itself"
      : list === null
        ? "null"
        : typeof list;
    throw new NodeFailure(
      "map_items_invalid",
      `The list of map node ${node.path} is not an array (got ${got}).`,
    );
  }
  if (list.length > node.maxItems) {
    throw new NodeFailure(
      "map_too_many_items",
      `The list of map node ${node.path} has ${list.length} items, more than its maxItems (${node.maxItems}).`,
    );
  }
  const bad = list.findIndex((item) => !isJson(item, 0));
  if (bad >= 0) {
    throw new NodeFailure("map_items_invalid", `Item ${bad} of map node ${node.path} is not a JSON value.`);
  }
  const json = JSON.stringify(list);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > MAP_ITEMS_MAX_BYTES) {
    throw new NodeFailure(
      "map_items_invalid",
      `The list of map node ${node.path} takes ${bytes} bytes of JSON, more than ${MAP_ITEMS_MAX_BYTES}.`,
    );
  }
  return JSON.parse(json) as unknown[];
}

/**
 * Opens a map visit's list: computed by `over` and saved (as the visit's `map.items` effect) before
 * any branch starts, or read back from that save on a crash retry, whatever `over` would say now.
 * Every item is checked against its branch's input before any branch runs.
 */
export async function openMapList(
  exec: Execution,
  lane: Lane,
  node: CompiledMapNode,
  visit: number,
): Promise<MapList> {
  const { workflow, runInput, position } = exec;
  const effects = effectsFor({
    runId: exec.runId,
    node,
    port: lane.port,
    visit,
    ...(exec.debug ? { debug: exec.debug } : {}),
  });
  let items: unknown[];
  try {
    items = await effects.idempotent(MAP_ITEMS_EFFECT, null, () => {
      const scope = {
        input: workflow.scopeInput(node.scope, runInput, position.outputsByPath),
        outputs: workflow.scopeOutputs(node.scope, position.outputsByPath),
      };
      return checkedItems(node, node.over(scope));
    });
  } catch (error) {
    if (!(error instanceof NodeFailure)) throw error;
    return { kind: "failed", error: safeError(error.code, error.message) };
  }
  const need = joinNeeds(node.join, items.length);
  if (need > items.length) {
    const message = `The list of map node ${node.path} has ${items.length} items; its join needs at least ${need}.`;
    return { kind: "failed", error: safeError("map_too_few_items", message) };
  }
  position.outputsByPath.set(mapItemsKey(node.path), items);
  const tail = node.branch.startPath.slice(node.branch.scope.length);
  const branches = items.map((_, i) => ({
    name: String(i),
    title: `${node.name}[${i}]`,
    scope: `${node.path}/${i}`,
    startPath: `${node.path}/${i}${tail}`,
  }));
  for (const branch of branches) {
    try {
      workflow.scopeInput(branch.scope, runInput, position.outputsByPath);
    } catch (error) {
      if (!(error instanceof ScopeInputError)) throw error;
      const message = `Item ${branch.name} of map node ${node.path} does not fit its branch: ${error.message}`;
      return { kind: "failed", error: safeError("map_item_invalid", message) };
    }
  }
  return { kind: "branches", branches };
}
