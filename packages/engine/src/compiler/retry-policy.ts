import { type ErrorCode, errorCodeSchema, MAX_NODE_TIMEOUT_MS, type NodeVisitResult } from "@piw/protocol";
import { fieldName, unknownFields } from "./known-fields.js";

/** The most attempts a retry policy may allow, and the longest pause between two of them (7 days). */
const MAX_RETRY_ATTEMPTS = 100;
const MAX_RETRY_DELAY_MS = MAX_NODE_TIMEOUT_MS;

/** A checked retry policy: every field filled in. */
export interface CompiledRetry {
  attempts: number;
  initialMs: number;
  factor: number;
  maxMs: number;
  jitter: number;
  /** null: the default rule (every failure of the node itself). */
  retryOn: { timedOut: boolean; codes: readonly ErrorCode[] } | null;
}

/** Failures that a next attempt cannot change; the default rule never retries them. */
const NEVER_RETRIED: ReadonlySet<string> = new Set([
  "cancelled",
  "max_steps_exceeded",
  "effect_conflict",
  "output_too_large",
  "source_changed",
  "model_unavailable",
]);

const RETRY_HELP = "retry must be { attempts, backoff: { initialMs, factor?, maxMs?, jitter? }, retryOn? }";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function intIn(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

function checkFields(
  value: Record<string, unknown>,
  known: string[],
  where: string,
  problem: (m: string) => void,
) {
  for (const field of unknownFields(value, known)) {
    problem(`${where} has no option ${fieldName(field)} (it takes: ${known.join(", ")})`);
  }
}

/**
 * Check one retry policy as written; undefined (and a problem reported) when it is invalid. `where`
 * names it in messages (`retry`, or the workflow's `defaults.retry`).
 */
export function checkRetry(
  value: unknown,
  where: string,
  problem: (m: string) => void,
): CompiledRetry | undefined {
  if (!isRecord(value) || !isRecord(value.backoff)) {
    problem(`${where}: ${RETRY_HELP}`);
    return undefined;
  }
  const before = { count: 0 };
  const report = (message: string) => {
    before.count += 1;
    problem(`${where}: ${message}`);
  };
  checkFields(value, ["attempts", "backoff", "retryOn"], "retry", report);
  const { attempts, backoff, retryOn } = value;
  checkFields(backoff, ["initialMs", "factor", "maxMs", "jitter"], "retry.backoff", report);
  if (!intIn(attempts, 2, MAX_RETRY_ATTEMPTS))
    report(`attempts must be an integer from 2 to ${MAX_RETRY_ATTEMPTS}`);
  const initialMs = backoff.initialMs;
  if (!intIn(initialMs, 0, MAX_RETRY_DELAY_MS)) {
    report(`backoff.initialMs must be an integer from 0 to ${MAX_RETRY_DELAY_MS}`);
  }
  const factor = backoff.factor ?? 2;
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1 || factor > 100) {
    report("backoff.factor must be a number from 1 to 100");
  }
  const maxMs = backoff.maxMs ?? MAX_RETRY_DELAY_MS;
  if (!intIn(maxMs, 0, MAX_RETRY_DELAY_MS) || (typeof initialMs === "number" && maxMs < initialMs)) {
    report(`backoff.maxMs must be an integer from initialMs to ${MAX_RETRY_DELAY_MS}`);
  }
  const jitter = backoff.jitter ?? 0;
  if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1))
    report("backoff.jitter must be a number from 0 to 1");
  const on = checkRetryOn(retryOn, report);
  if (before.count > 0) return undefined;
  return {
    attempts: attempts as number,
    initialMs: initialMs as number,
    factor: factor as number,
    maxMs: maxMs as number,
    jitter: jitter as number,
    retryOn: on ?? null,
  };
}

function checkRetryOn(value: unknown, report: (m: string) => void): CompiledRetry["retryOn"] | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    report("retryOn must be { timedOut?: boolean, codes?: error codes }");
    return undefined;
  }
  checkFields(value, ["timedOut", "codes"], "retry.retryOn", report);
  if (value.timedOut !== undefined && typeof value.timedOut !== "boolean")
    report("retryOn.timedOut must be a boolean");
  const codes: ErrorCode[] = [];
  if (value.codes !== undefined) {
    if (!Array.isArray(value.codes)) report("retryOn.codes must be an array of error codes");
    else {
      for (const code of value.codes) {
        const parsed = errorCodeSchema.safeParse(code);
        if (parsed.success) codes.push(parsed.data);
        else report(`retryOn.codes: ${fieldName(String(code))} is not an error code`);
      }
    }
  }
  return { timedOut: value.timedOut === true, codes };
}

/** A node's compiled policy: its own `retry`, else its workflow's `defaults.retry`, else none (null). */
export function compileRetry(
  own: unknown,
  workflowDefault: CompiledRetry | undefined,
  problem: (m: string) => void,
): CompiledRetry | null | undefined {
  if (own === undefined) return workflowDefault ?? null;
  return checkRetry(own, "retry", problem);
}

/** Whether `policy` retries this failed result. */
export function retries(
  policy: CompiledRetry,
  result: Exclude<NodeVisitResult, { status: "succeeded" }>,
): boolean {
  if (policy.retryOn === null) return !NEVER_RETRIED.has(result.error.code);
  if (result.status === "timed_out" && policy.retryOn.timedOut) return true;
  return policy.retryOn.codes.includes(result.error.code);
}

/**
 * The pause before the attempt after `failedAttempts` failures: initialMs × factor^(failures − 1),
 * at most maxMs, less up to `jitter` of it at random.
 */
export function retryDelayMs(policy: CompiledRetry, failedAttempts: number, random: () => number): number {
  const grown = policy.initialMs * policy.factor ** Math.max(0, failedAttempts - 1);
  const capped = Math.min(policy.maxMs, grown);
  return Math.max(0, Math.round(capped * (1 - policy.jitter * random())));
}
