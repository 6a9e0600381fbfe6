import { NODE_KINDS } from "./node-kinds.js";
import { MAX_NODE_TIMEOUT_MS } from "./run-records.js";
import {
  type Check,
  int,
  isRecord,
  nodePath,
  nullable,
  object,
  oneOf,
  optional,
  required,
  type Shape,
  variants,
  visitNumber,
} from "./run-summary-check.js";

/**
 * Checks without zod of the requests a host receives from a worker once per node (`visit.start`,
 * `visit.finish`, `visit.advance`), for the RPC peer's quick path: the host takes every node of every
 * run, and zod's parse of these params was a fifth of its CPU per node. Each check is narrower than
 * its schema: it accepts only a plain start and a succeeded finish, field by field by the same rules,
 * with nothing the schema would strip, default or transform (no unknown field, no `__proto__` key in
 * an output, which zod's copy drops), so what it accepts the schema parses to an equal value; anything
 * else (a failed visit, a timed-out one) goes to the schema. packages/protocol/test/
 * visit-request-check.test.ts holds each check to its schema.
 */

/**
 * A JSON value as zod's `z.json()` gives it back unchanged: a parsed frame holds nothing but JSON, so
 * what is left to refuse is an own `__proto__` key (zod's copy drops it) and a number that is not finite.
 */
export const plainJson: Check = (value) => {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item === "string" || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return false;
      continue;
    }
    if (Array.isArray(item)) {
      for (const member of item) pending.push(member);
      continue;
    }
    if (!isRecord(item) || Object.getPrototypeOf(item) !== Object.prototype) return false;
    for (const key of Object.keys(item)) {
      if (key === "__proto__") return false;
      pending.push(item[key]);
    }
  }
  return true;
};

const startShape: Shape = {
  path: required(nodePath),
  visit: required(visitNumber),
  nodeKind: required(oneOf(...NODE_KINDS)),
  timeoutMs: optional(nullable((value) => int(1)(value) && (value as number) <= MAX_NODE_TIMEOUT_MS)),
  holdOnPause: optional((value) => value === true),
};

const succeeded = variants("status", {
  succeeded: { output: required(plainJson), next: required(nullable(nodePath)) },
});

const finishShape: Shape = {
  path: required(nodePath),
  visit: required(visitNumber),
  result: required(succeeded),
};

/** `visit.start`'s params. */
export const quickStartParams: Check = object(startShape);

/** `visit.finish`'s params, for a visit that succeeded. */
export const quickFinishParams: Check = object(finishShape);

const advanceShape = object({ finish: required(object(finishShape)), start: required(object(startShape)) });

/** `visit.advance`'s params: a succeeded visit and the start of the node it leads to. */
export const quickAdvanceParams: Check = (value) =>
  advanceShape(value) &&
  (value as { finish: { result: { next: unknown } } }).finish.result.next ===
    (value as { start: { path: unknown } }).start.path;
