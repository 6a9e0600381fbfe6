import type { ScopeContext } from "../compiler/compiled-workflow.js";
import type { JoinOption, MapNode } from "./node-specs.js";
import type { BranchOutput, ParallelBranch } from "./parallel.js";

/**
 * The map node's output: one entry per item, in item order. With `join: "all"` every entry is its
 * branch's output; with `"any"` or `atLeast` a branch that failed or was cancelled gives `null`.
 */
export type MapOutput<Br, J> = [J] extends ["all"] ? BranchOutput<Br>[] : (BranchOutput<Br> | null)[];

/** A function of the map's scope, checked bivariantly so that a narrower input still fits. */
type OverFn<I> = { bivariant(ctx: ScopeContext<I>): readonly unknown[] }["bivariant"];

export interface MapOptions<Br extends ParallelBranch, J extends JoinOption, I = unknown> {
  title?: string;
  /**
   * The list to run the branch over, computed from the scope's input and outputs when the visit
   * opens. It is saved before any branch starts: a crash retry runs over the saved list.
   */
  over: OverFn<I>;
  /** Run once per item, with the item as its input: a workflow, an `includeWorkflow(...)` or a node. */
  branch: Br;
  /** When the node is done: every branch succeeded (the default), the first one did, or `atLeast`. */
  join?: J;
  /** How many branches may run at once (at least 1); default 4. */
  concurrency?: number;
  /** The longest list accepted, from 1 to 1000; default 100. A longer list fails the node. */
  maxItems?: number;
}

/**
 * Runs `branch` once per item of the list `over` returns, side by side (`concurrency` at a time),
 * and joins the branches like `parallel`. Inside a branch `ctx.input` is the item and `ctx.mapIndex`
 * its index.
 */
export function map<const Br extends ParallelBranch, const J extends JoinOption = "all", I = unknown>(
  options: MapOptions<Br, J, I>,
): MapNode<Br, MapOutput<Br, J>> {
  return { kind: "map", ...options } as unknown as MapNode<Br, MapOutput<Br, J>>;
}
