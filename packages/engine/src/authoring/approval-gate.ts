import type { NodeContext } from "../compiler/compiled-workflow.js";

// Apart from approval.ts so that node-specs.ts (the checkpoint node that carries a gate) and approval.ts
// (which builds that node) do not import each other.

/**
 * Whether an approval gate is asked: `required` waits for a person; `auto` takes the default at once
 * and records it as automatic; `skip` passes the gate with no choice at all (`{ skipped: true }`).
 */
export type ApprovalMode = "required" | "auto" | "skip";

/** The gate's run-time settings, carried on its checkpoint node for the compiler. */
export interface ApprovalGate<I = unknown> {
  readonly mode: ApprovalMode | { bivariant(ctx: NodeContext<I>): ApprovalMode }["bivariant"];
  readonly defaultChoice: string;
  /** After this many ms without an answer the host takes the default; null: no deadline. */
  readonly deadlineMs: number | null;
}
