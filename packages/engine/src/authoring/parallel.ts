import type { WorkflowDefinition, WorkflowInclude } from "./define-workflow.js";
import type { JoinOption, NodeOutput, ParallelNode, WorkflowNode } from "./node-specs.js";

/** One branch: a workflow (it sees the parent scope's input), an include with its own input, or a node. */
export type ParallelBranch = WorkflowDefinition | WorkflowInclude | WorkflowNode;

/** What a branch contributes to the join: a node's output, or `unknown` for a sub-workflow. */
export type BranchOutput<Br> = Br extends { readonly kind: "workflow" | "include" }
  ? unknown
  : NodeOutput<Br>;

/**
 * The parallel node's output. With `join: "all"` every branch is there; with `"any"` or `atLeast`
 * only the branches that succeeded are (a branch that failed or was cancelled once the join was
 * satisfied has no key).
 */
export type ParallelOutput<B, J> = J extends "all"
  ? { -readonly [K in keyof B]: BranchOutput<B[K]> }
  : { -readonly [K in keyof B]?: BranchOutput<B[K]> };

export interface ParallelOptions<B extends Record<string, ParallelBranch>, J extends JoinOption> {
  title?: string;
  /** By branch name; each branch runs its own sequence of node visits. */
  branches: B;
  /** When the node is done: every branch succeeded, the first one did, or at least `atLeast` did. */
  join: J;
  /** How many branches may run at once (at least 1); default: all of them. */
  concurrency?: number;
}

/**
 * Runs `branches` side by side and joins them per `join`. A failed branch fails the node (route it with
 * `onFailure`) once the join can no longer be satisfied; with `"any"`/`atLeast` the branches still
 * running when the join is satisfied are cancelled (their commands killed, their sessions aborted).
 */
export function parallel<const B extends Record<string, ParallelBranch>, const J extends JoinOption>(
  options: ParallelOptions<B, J>,
): ParallelNode<B, ParallelOutput<B, J>> {
  return { kind: "parallel", ...options } as ParallelNode<B, ParallelOutput<B, J>>;
}
