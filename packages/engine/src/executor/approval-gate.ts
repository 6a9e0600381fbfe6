import type { JsonValue } from "@piw/protocol";
import type { CompiledCheckpointNode, NodeContext } from "../compiler/compiled-workflow.js";

// How an approval gate (a checkpoint built by `approval()`) answers itself. Its answers are JSON
// values the answer schema refuses from a person (strict objects), so nobody can pose as the clock.

/** The answer a gate takes with no person: `auto` mode at once, or its deadline passed. */
function automaticAnswer(choice: string, why: "auto" | "deadline"): JsonValue {
  return { choice, automatic: why };
}

/** A visit's own answer (auto or skip), or null when it waits for one. */
export function presetAnswer(node: CompiledCheckpointNode, ctx: NodeContext): JsonValue | null {
  if (node.gate === null) return null;
  const mode = node.gate.mode(ctx);
  switch (mode) {
    case "required":
      return null;
    case "auto":
      return automaticAnswer(node.gate.defaultChoice, "auto");
    case "skip":
      return { skipped: true };
    default:
      return mode satisfies never;
  }
}

/** The answer the host takes at the gate's deadline, and when; null without a deadline. */
export function deadlineDefault(
  node: CompiledCheckpointNode,
  now: number,
): { at: number; answer: JsonValue } | null {
  if (node.gate === null || node.gate.deadlineMs === null) return null;
  return { at: now + node.gate.deadlineMs, answer: automaticAnswer(node.gate.defaultChoice, "deadline") };
}

/** Whether `answer` is exactly the default the host takes at this gate's deadline. */
export function isDeadlineAnswer(node: CompiledCheckpointNode, answer: unknown): boolean {
  if (node.gate === null || node.gate.deadlineMs === null) return false;
  const a = answer as { choice?: unknown; automatic?: unknown } | null;
  return (
    typeof a === "object" &&
    a !== null &&
    Object.keys(a).length === 2 &&
    a.choice === node.gate.defaultChoice &&
    a.automatic === "deadline"
  );
}
