import type { CompiledNode, CompiledWorkflow } from "../compiler/compiled-workflow.js";
import { type NodeTimeout, TIMEOUT_RULE, validTimeoutMs } from "../compiler/deadlines.js";
import { NodeFailure } from "./execution-signals.js";

/**
 * The length of a visit's deadline, in ms, or null for none: evaluated once, when the visit opens;
 * the store saves the deadline, so a reopened visit keeps what was left of it. A computed value that is
 * not a valid length fails the node.
 */
function timeoutAtStart(timeout: NodeTimeout, input: unknown, path: string): number | null {
  switch (timeout.kind) {
    case "none":
      return null;
    case "fixed":
      return timeout.ms;
    case "computed": {
      let value: unknown;
      try {
        value = timeout.of(input);
      } catch {
        throw new NodeFailure("node_failed", `The timeoutMs function of ${path} threw.`);
      }
      if (value === null) return null;
      if (!validTimeoutMs(value)) {
        throw new NodeFailure(
          "node_failed",
          `The timeoutMs function of ${path} returned an invalid value: ${TIMEOUT_RULE}.`,
        );
      }
      return value;
    }
    default:
      return timeout satisfies never;
  }
}

/** The deadline length a new visit of `node` starts with; undefined for kinds that have none. */
export function visitTimeoutMs(
  workflow: CompiledWorkflow,
  node: CompiledNode,
  runInput: unknown,
  outputsByPath: ReadonlyMap<string, unknown>,
): number | null | undefined {
  if (node.kind !== "agent" && node.kind !== "shell" && node.kind !== "action") return undefined;
  const input =
    node.timeout.kind === "computed" ? workflow.scopeInput(node.scope, runInput, outputsByPath) : undefined;
  return timeoutAtStart(node.timeout, input, node.path);
}
