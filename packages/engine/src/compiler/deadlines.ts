import { MAX_NODE_TIMEOUT_MS } from "@piw/protocol";
import { type CompiledRetry, checkRetry } from "./retry-policy.js";

/** The node kinds that run under a deadline: the ones that can wait on something outside the engine. */
export type TimedNodeKind = "agent" | "shell" | "action";

/**
 * The deadline of a node whose workflow and node set none. An agent step waits on a model and a
 * person's Pi session; a command or an action should finish well within minutes.
 */
export const DEFAULT_TIMEOUT_MS: Readonly<Record<TimedNodeKind, number>> = {
  agent: 30 * 60_000,
  shell: 10 * 60_000,
  action: 10 * 60_000,
};

/** The longest deadline a node may have (7 days); longer waits belong to a checkpoint. */
export const MAX_TIMEOUT_MS: number = MAX_NODE_TIMEOUT_MS;

/** A node's deadline as compiled: none (opted out), a fixed length, or one computed from the input at start. */
export type NodeTimeout =
  | { kind: "none" }
  | { kind: "fixed"; ms: number }
  | { kind: "computed"; of: (input: unknown) => unknown };

export const TIMEOUT_RULE = `timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}, null (no deadline) or a function of the input`;

export function validTimeoutMs(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_TIMEOUT_MS;
}

/**
 * The compiled deadline of one node: its own `timeoutMs`, else its workflow's default for its kind,
 * else DEFAULT_TIMEOUT_MS. Reports an invalid value through `problem` and returns undefined.
 */
export function compileTimeout(
  own: unknown,
  workflowDefault: unknown,
  kind: TimedNodeKind,
  problem: (message: string) => void,
): NodeTimeout | undefined {
  const value =
    own !== undefined ? own : workflowDefault !== undefined ? workflowDefault : DEFAULT_TIMEOUT_MS[kind];
  if (value === null) return { kind: "none" };
  if (typeof value === "function") return { kind: "computed", of: value as (input: unknown) => unknown };
  if (validTimeoutMs(value)) return { kind: "fixed", ms: value };
  problem(own !== undefined ? TIMEOUT_RULE : `the workflow's defaults.timeoutMs.${kind}: ${TIMEOUT_RULE}`);
  return undefined;
}

/** Checks a workflow's `defaults` option; returns the per-kind defaults it sets. */
export function workflowTimeoutDefaults(
  defaults: unknown,
  problem: (field: string, message: string) => void,
): Partial<Record<TimedNodeKind, unknown>> & { retry?: CompiledRetry } {
  if (defaults === undefined) return {};
  if (typeof defaults !== "object" || defaults === null || Array.isArray(defaults)) {
    problem("defaults", "defaults must be an object such as { timeoutMs: { agent: 600000 } }");
    return {};
  }
  const fields = defaults as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== "timeoutMs" && key !== "retry")
      problem(`defaults.${key}`, `defaults has no option "${key}" (it takes: timeoutMs, retry)`);
  }
  const retry =
    fields.retry === undefined
      ? undefined
      : checkRetry(fields.retry, "defaults.retry", (message) => problem("defaults.retry", message));
  const withRetry = retry === undefined ? {} : { retry };
  const timeouts = fields.timeoutMs;
  if (timeouts === undefined) return withRetry;
  if (typeof timeouts !== "object" || timeouts === null || Array.isArray(timeouts)) {
    problem("defaults.timeoutMs", "defaults.timeoutMs must be an object keyed by agent, shell and action");
    return withRetry;
  }
  const result: Partial<Record<TimedNodeKind, unknown>> & { retry?: CompiledRetry } = { ...withRetry };
  for (const [key, value] of Object.entries(timeouts)) {
    if (!Object.hasOwn(DEFAULT_TIMEOUT_MS, key)) {
      problem(
        `defaults.timeoutMs.${key}`,
        `only agent, shell and action nodes have a deadline, not "${key}"`,
      );
      continue;
    }
    const check = compileTimeout(value, undefined, key as TimedNodeKind, (message) =>
      problem(`defaults.timeoutMs.${key}`, message),
    );
    if (check !== undefined) result[key as TimedNodeKind] = value;
  }
  return result;
}
