import { codePointLength } from "./code-points.js";
import { type IdPattern, NODE_PATH, OPAQUE_ID, RUN_ID } from "./id-patterns.js";
import type { RunSummary } from "./run-view.js";

/**
 * A check of the run list's reply that needs no zod, for `piw list`'s quick route: building the
 * protocol's zod schemas is most of that short process's start. It is deliberately narrower than
 * `runSummarySchema`: it accepts only summaries it checks field by field by the same rules, and
 * refuses anything else (a field or a value it does not know, a live agent or step progress), so the
 * caller then takes the full route, where `runSummarySchema` parses the reply. Anything accepted here
 * the schema accepts too (apps/piw/test/quick-list.test.ts holds both to that).
 */

export type Check = (value: unknown) => boolean;
export type Shape = Record<string, { check: Check; optional?: true }>;

const encoder = new TextEncoder();

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const text =
  (min = 0, max = Number.POSITIVE_INFINITY, pattern?: RegExp): Check =>
  (value) =>
    typeof value === "string" &&
    value.length >= min &&
    value.length <= max &&
    (pattern === undefined || pattern.test(value));
export const number: Check = (value) => typeof value === "number" && Number.isFinite(value);
export const int =
  (min = Number.MIN_SAFE_INTEGER): Check =>
  (value) =>
    Number.isSafeInteger(value) && (value as number) >= min;
export const bool: Check = (value) => typeof value === "boolean";
/** An array of at most `max` items, each passing `item`. */
export const list =
  (item: Check, max = Number.POSITIVE_INFINITY): Check =>
  (value) =>
    Array.isArray(value) && value.length <= max && value.every(item);
const atLeastZero: Check = (value) => number(value) && (value as number) >= 0;
export const oneOf =
  (...values: readonly string[]): Check =>
  (value) =>
    typeof value === "string" && values.includes(value);
export const nullable =
  (check: Check): Check =>
  (value) =>
    value === null || check(value);
export const required = (check: Check) => ({ check });
export const optional = (check: Check) => ({ check, optional: true as const });

/** Exactly these keys (an unknown one refuses), each passing its check. */
export const object =
  (shape: Shape): Check =>
  (value) => {
    if (!isRecord(value)) return false;
    // Own keys of the shape only: `__proto__` or `constructor` in a value is unknown, not Object.prototype's.
    for (const key of Object.keys(value)) if (!Object.hasOwn(shape, key)) return false;
    for (const [key, field] of Object.entries(shape)) {
      if (!(key in value) || value[key] === undefined) {
        if (field.optional) continue;
        return false;
      }
      if (!field.check(value[key])) return false;
    }
    return true;
  };

/** A discriminated union: the variant named by `key`, checked with that variant's shape. */
export const variants =
  (key: string, shapes: Record<string, Shape>): Check =>
  (value) => {
    if (!isRecord(value)) return false;
    const tag = value[key];
    const shape = typeof tag === "string" && Object.hasOwn(shapes, tag) ? shapes[tag] : undefined;
    return shape !== undefined && object({ [key]: required(oneOf(tag as string)), ...shape })(value);
  };

const id = ({ pattern, maxLength }: IdPattern): Check => text(1, maxLength, pattern);
const runId = id(RUN_ID);
export const nodePath = id(NODE_PATH);
/** A visit number, 1 to 1,000,000, as `visitNumberSchema` takes it. */
export const visitNumber: Check = (value) => int(1)(value) && (value as number) <= 1_000_000;
const opaqueId = id(OPAQUE_ID);
const reasonMessage = required(text(0, 512));
const visit = int(1);

/** The error codes a summary may carry (see `errorCodeSchema`); another code takes the full route. */
const ERROR_CODES = [
  "workflow_not_found",
  "workflow_invalid",
  "input_invalid",
  "answer_invalid",
  "workflow_exited_at_load",
  "workflow_crashed_at_load",
  "workflow_load_timeout",
  "preflight_failed",
  "source_changed",
  "store_unavailable",
  "activation_failed",
  "cancelled",
  "node_failed",
  "node_timed_out",
  "output_invalid",
  "output_too_large",
  "max_steps_exceeded",
  "effect_conflict",
  "pi_sdk_missing",
  "model_unavailable",
  "worker_failed",
  "internal_error",
] as const;

const spendShape: Shape = {
  usd: required(atLeastZero),
  tokens: required(int(0)),
  agentTurns: required(int(0)),
  wallMs: required(int(0)),
};
const limit =
  (isInt: boolean): Check =>
  (value) =>
    number(value) &&
    (value as number) > 0 &&
    (value as number) <= 1e12 &&
    (!isInt || Number.isSafeInteger(value));
export const budget = object({
  usd: optional(limit(false)),
  tokens: optional(limit(true)),
  agentTurns: optional(limit(true)),
  wallMs: optional(limit(true)),
});

const recoveryReason = variants("code", {
  paused: { message: reasonMessage },
  worker_lost: { message: reasonMessage, launchId: required(opaqueId) },
  worker_lost_no_progress: { message: reasonMessage, launchId: optional(opaqueId) },
  agent_turns_lost: { message: reasonMessage, path: required(nodePath) },
  agent_attempts_exhausted: {
    message: reasonMessage,
    path: required(nodePath),
    launchId: optional(opaqueId),
  },
  changes_refused: { message: reasonMessage },
  waiting: {
    message: reasonMessage,
    path: required(nodePath),
    visit: required(visit),
    until: required(int(0)),
  },
  retry_waiting: {
    message: reasonMessage,
    path: required(nodePath),
    visit: required(visit),
    attempt: required(int(2)),
    attempts: required(int(2)),
    at: required(int(0)),
    lastError: required(text(0, 64)),
  },
  manual_effect_unsettled: { message: reasonMessage, effectId: required(text()) },
  budget_exceeded: {
    message: reasonMessage,
    path: required(nodePath),
    limit: required(oneOf("usd", "tokens", "agentTurns", "wallMs")),
    spent: required(object(spendShape)),
    budget: required(budget),
  },
});

/** PROGRESS_MESSAGE_MAX_CHARS (node-progress.ts, which loads zod); the quick routes' tests pin it. */
const PROGRESS_MESSAGE_MAX = 200;

/** At most `max` code points, as `oneLineSchema` counts them (the cheap bound on UTF-16 units first). */
const line =
  (max: number): Check =>
  (value) =>
    typeof value === "string" && value.length <= max * 2 && codePointLength(value) <= max;

/** A node visit's latest progress, as `nodeProgressSchema` has it; `runProgress` is one. */
const nodeProgress = object({
  path: required(nodePath),
  visit: required(visit),
  done: required(nullable(atLeastZero)),
  total: required(nullable(atLeastZero)),
  message: required(nullable(line(PROGRESS_MESSAGE_MAX))),
  updatedAt: required(number),
  eta: required(
    nullable(object({ at: required(number), confidence: required(oneOf("low", "medium", "high")) })),
  ),
});

const safeError = object({
  code: required(oneOf(...ERROR_CODES)),
  message: required((value) => typeof value === "string" && encoder.encode(value).byteLength <= 512),
});

/** The run list's row, field by field; the run view's check (run-view-check.ts) adds the rest. */
export const runSummaryShape: Shape = {
  runId: required(runId),
  workflowName: required(text()),
  source: required(
    variants("kind", {
      file: { path: required(text(1, 4096)), sha256: required(text(64, 64, /^[0-9a-f]{64}$/)) },
      builtin: { id: required(text(1, 200)), revision: required(text(1, 200)) },
    }),
  ),
  title: required(nullable(text())),
  status: required(oneOf("queued", "starting", "running", "parked", "done", "failed", "cancelled")),
  outcome: required(nullable(oneOf("completed", "waiting", "failed", "timed_out", "cancelled"))),
  origin: required(
    variants("kind", {
      pi: { sessionId: required(text()) },
      cli: {},
      schedule: { scheduleId: required(text(1, 64)), scheduledFor: required(int()) },
    }),
  ),
  parentRunId: required(nullable(runId)),
  rootRunId: required(runId),
  originCommand: required(oneOf("start", "continue", "restart")),
  restartNumber: required(int()),
  paused: required(bool),
  recoveryReason: required(nullable(recoveryReason)),
  error: required(nullable(safeError)),
  revision: required(int()),
  createdAt: required(number),
  startedAt: required(nullable(number)),
  finishedAt: required(nullable(number)),
  currentWork: required(
    variants("kind", {
      none: {},
      worker: { launchId: required(text()), path: required(nullable(nodePath)) },
      turn: { turnId: required(text()), path: required(nullable(nodePath)) },
      waiting_for_model: { path: required(nodePath) },
      waiting_for_worker: { position: required(int()), cap: required(int()) },
    }),
  ),
  cursor: required(nullable(object({ path: required(nodePath), visit: required(int()) }))),
  continuedAs: optional(nullable(runId)),
  inputSummary: optional(text(0, 120)),
  budget: optional(nullable(budget)),
  spend: optional(object(spendShape)),
  runProgress: optional(nodeProgress),
};
const runSummary = object(runSummaryShape);

/** The run list's reply, when every summary passes the quick check; undefined sends the caller the full way. */
export function quickRunSummaries(value: unknown): RunSummary[] | undefined {
  if (!Array.isArray(value) || value.length > 1000) return undefined;
  return value.every(runSummary) ? (value as RunSummary[]) : undefined;
}

/**
 * The saved run of `runs.reserve`'s reply, when it was applied or adopted and its summary passes the
 * quick check; undefined for a conflict, a needed recovery or anything else (the full route says why).
 */
export function quickReservedRun(value: unknown): RunSummary | undefined {
  const saved = variants("kind", {
    applied: { value: required(runSummary) },
    adopted: { value: required(runSummary) },
  });
  return saved(value) ? ((value as { value: RunSummary }).value as RunSummary) : undefined;
}

/** `runs.subscribe`'s reply: the subscription's ID. */
export function quickSubscriptionId(value: unknown): string | undefined {
  return object({ subscriptionId: required(text()) })(value)
    ? (value as { subscriptionId: string }).subscriptionId
    : undefined;
}

/** The `hello` reply of a host of this protocol version, checked the same way. */
export function quickHelloResult(
  value: unknown,
  protocol: number,
): { protocol: number; hostPid: number; stateDir: string; version: string } | undefined {
  const hello = object({
    protocol: required((v) => v === protocol),
    hostPid: required(int()),
    stateDir: required(text()),
    version: required(text()),
  });
  return hello(value)
    ? (value as { protocol: number; hostPid: number; stateDir: string; version: string })
    : undefined;
}
