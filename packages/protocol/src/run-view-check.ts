import {
  type Check,
  list,
  int,
  isRecord,
  nodePath,
  nullable,
  number,
  object,
  oneOf,
  optional,
  required,
  runSummaryShape,
  text,
  variants,
} from "./run-summary-check.js";
import { NODE_KINDS } from "./node-kinds.js";
import { PASSED_VISITS_MAX } from "./passed-visits.js";
import type { RunView } from "./run-view.js";

/**
 * A check of `runs.get`'s reply that needs no zod, for `piw status`'s quick route, built like the run
 * list's (run-summary-check.ts) and as narrow: it refuses whatever it does not check field by field
 * (the live facts of a running agent step or a running step's progress among them), so the caller takes
 * the full route, where `runViewSchema` parses the reply. Anything accepted here the schema accepts
 * too (apps/piw/test/quick-status.test.ts holds both to that).
 */

/** Any JSON value: a parsed frame holds nothing else. */
const json: Check = (value) => value !== undefined;
const name = text(1);

const nodeKind = oneOf(...NODE_KINDS);
const answeredBy = oneOf("human", "model", "either");

const nodeView = object({
  path: required(nodePath),
  kind: required(nodeKind),
  title: required(text()),
  state: required(oneOf("pending", "running", "succeeded", "failed", "timed_out", "cancelled", "paused")),
  visits: required(int(0)),
  attempt: required(int(0)),
  startedAt: required(nullable(number)),
  finishedAt: required(nullable(number)),
  errorCode: required(nullable(text())),
  deadlineAt: optional(nullable(number)),
});

const passedVisit = object({
  path: required(nodePath),
  visit: required(int(1)),
  attempt: required(int(1)),
  state: required(oneOf("succeeded", "failed", "timed_out")),
  startedAt: required(number),
  finishedAt: required(number),
  errorCode: required(nullable(text())),
});

const manifest = object({
  version: required((value) => value === 1),
  workflow: required(name),
  title: optional(text()),
  startPath: required(nodePath),
  exits: required(list(name)),
  maxSteps: required(int(1)),
  nodes: required(
    list(
      object({
        path: required(nodePath),
        name: required(name),
        scope: required(text()),
        kind: required(nodeKind),
        title: required(text()),
        answeredBy: optional(answeredBy),
      }),
    ),
  ),
  mounts: required(
    list(
      object({
        path: required(nodePath),
        name: required(name),
        scope: required(text()),
        workflow: required(name),
        title: required(text()),
        startPath: required(nodePath),
        exits: required(list(name)),
      }),
    ),
  ),
  edges: required(
    list(
      object({
        from: required(nodePath),
        to: required(
          variants("kind", {
            node: { path: required(nodePath) },
            exit: { exit: required(name) },
            join: { path: required(nodePath) },
          }),
        ),
        label: optional(text()),
        via: optional(list(text())),
      }),
    ),
  ),
  forks: optional(
    list(
      object({
        path: required(nodePath),
        join: required(variants("kind", { all: {}, any: {}, atLeast: { count: required(int(1)) } })),
        concurrency: required(nullable(int(1))),
        branches: required(
          list(object({ name: required(name), title: required(text()), startPath: required(nodePath) })),
        ),
        map: optional((value) => value === true),
      }),
    ),
  ),
});

const viewValue = variants("kind", {
  json: { value: required(json) },
  omitted: { bytes: required(int(0)) },
  cleared: {},
});

const checkpoint = object({
  path: required(nodePath),
  visit: required(int()),
  prompt: required(text()),
  answeredBy: required(answeredBy),
  answerSchema: required(nullable(isRecord)),
  deadline: optional(nullable(object({ at: required(number), answer: required(json) }))),
});

const runView = object({
  ...runSummaryShape,
  input: optional(viewValue),
  output: optional(nullable(viewValue)),
  nodes: required(list(nodeView)),
  passed: optional(list(passedVisit, PASSED_VISITS_MAX)),
  passedOmitted: optional(int(1)),
  manifest: required(manifest),
  checkpoint: optional(nullable(checkpoint)),
  workspaces: optional(
    list(
      object({
        path: required(text(0, 4096)),
        branch: required(text(0, 512)),
        mode: required(oneOf("branch", "worktree")),
      }),
      20,
    ),
  ),
  abortTurn: optional(
    nullable(
      object({ turnId: required(text()), requestId: required(text()), reason: required(text(0, 500)) }),
    ),
  ),
});

/** `runs.get`'s reply when the quick check takes it; undefined (a missing run too) sends the caller the full way. */
export function quickRunView(value: unknown): RunView | undefined {
  return runView(value) ? (value as RunView) : undefined;
}
