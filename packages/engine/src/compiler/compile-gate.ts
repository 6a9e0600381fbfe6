import { DAY_MS } from "@piw/protocol";
import type { ZodType } from "zod";
import { NodeFailure } from "../executor/execution-signals.js";
import type { CompiledGate, NodeContext } from "./compiled-workflow.js";

type Check = (message: string) => void;

const MODES = ["required", "auto", "skip"] as const;
/** A deadline shorter than this could pass before anyone saw the gate; longer ones outlive the product's limits. */
const MIN_DEADLINE_MS = 1_000;
const MAX_DEADLINE_MS = 30 * DAY_MS;

function isMode(value: unknown): value is (typeof MODES)[number] {
  return typeof value === "string" && (MODES as readonly string[]).includes(value);
}

/** An approval gate's settings (see `approval()`), checked against the checkpoint's own answer schema. */
export function compileGate(value: unknown, answer: ZodType, problem: Check): CompiledGate | undefined {
  const gate = value as { mode?: unknown; defaultChoice?: unknown; deadlineMs?: unknown } | null;
  if (typeof gate !== "object" || gate === null) {
    problem("gate must be built by approval()");
    return undefined;
  }
  const { mode, defaultChoice, deadlineMs } = gate;
  if (typeof mode !== "function" && !isMode(mode)) {
    problem(`approval must be one of ${MODES.join(", ")}, or a function of the node context`);
    return undefined;
  }
  // The default is taken with no person, so it must be a whole answer on its own: a choice without a note.
  if (typeof defaultChoice !== "string" || !answer.safeParse({ choice: defaultChoice }).success) {
    problem("the default must be one of the choices, and not one that needs a note");
    return undefined;
  }
  if (
    deadlineMs !== null &&
    (typeof deadlineMs !== "number" ||
      !Number.isInteger(deadlineMs) ||
      deadlineMs < MIN_DEADLINE_MS ||
      deadlineMs > MAX_DEADLINE_MS)
  ) {
    problem(`deadlineMs must be a whole number of ms from ${MIN_DEADLINE_MS} to ${MAX_DEADLINE_MS}`);
    return undefined;
  }
  const decide = typeof mode === "function" ? (mode as (ctx: NodeContext) => unknown) : () => mode;
  return {
    mode(ctx) {
      const chosen = decide(ctx);
      if (isMode(chosen)) return chosen;
      throw new NodeFailure("node_failed", `The approval function returned none of ${MODES.join(", ")}.`);
    },
    defaultChoice,
    deadlineMs,
  };
}
