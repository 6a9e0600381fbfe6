import {
  type Check,
  int,
  nodePath,
  nullable,
  object,
  optional,
  required,
  type Shape,
  variants,
  visitNumber,
} from "./run-summary-check.js";

/**
 * Checks without zod of the host's replies a worker receives once per node (`visit.start`,
 * `visit.finish`, `visit.advance`), for the RPC peer's quick path. A worker is a short-lived process:
 * its zod schemas never warm up, and parsing these replies cost it more CPU than anything else it does
 * per node. Each check is narrower than its schema: it accepts only a saved, running or succeeded
 * visit, field by field by the same rules, with nothing the schema would strip, default or transform,
 * so what it accepts the schema parses to an equal value; anything else (a conflict, a failed visit,
 * an unknown field) goes to the schema. packages/protocol/test/visit-transition-check.test.ts holds
 * each check to its schema.
 */

/** Any JSON value: a parsed frame holds nothing else. */
const json: Check = (value) => value !== undefined;

const visitFields: Shape = {
  path: required(nodePath),
  visit: required(visitNumber),
  attempt: required(int()),
};

const runningVisit: Shape = {
  ...visitFields,
  deadline: optional(nullable(object({ timeoutMs: required(int()), at: required(int()) }))),
  dueAt: optional(int()),
  failedAttempts: optional(int(0)),
};

const finishedVisit: Shape = {
  ...visitFields,
  result: required(
    variants("status", { succeeded: { output: required(json), next: required(nullable(nodePath)) } }),
  ),
};

const visitState = variants("status", { running: runningVisit, finished: finishedVisit });

/** A saved transition (`applied` or `adopted`) whose value passes `value`. */
const saved = (value: Check): Check => {
  const shape = { value: required(value) };
  return variants("kind", { applied: shape, adopted: shape });
};

/** `visit.start`'s and `visit.finish`'s reply: the saved visit. */
export const quickVisitTransition: Check = saved(visitState);

/** `visit.advance`'s reply: the finished visit and the next one's saved start. */
export const quickVisitAdvance: Check = saved(
  object({
    finished: required(variants("status", { finished: finishedVisit })),
    started: required(quickVisitTransition),
  }),
);
