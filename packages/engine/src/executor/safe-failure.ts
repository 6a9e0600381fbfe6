import { asSentence, boundSafeMessage, type ErrorCode, type SafeError, safeError } from "@piw/protocol";
import { isWorkflowError } from "../authoring/workflow-error.js";
import { RoutingError, ScopeInputError } from "../compiler/runtime-errors.js";
import { describeIssues } from "../compiler/schema-issues.js";
import { NodeFailure } from "./execution-signals.js";
import { isProgressInvalid } from "./visit-progress.js";

// Everything workflow code throws (a node, an effect, a shell parse, a projection, a stray timer)
// becomes a saved error here and nowhere else. A thrown message can quote the input, an environment
// variable or an effect's result (`JSON.parse(secret)` does), so the saved message is built from our
// own words and the error's class only; the raw text goes to the worker's local debug log.

/** Who threw, in our own words ("Compute node review/check"), and the code to save it under. */
export interface FailureSite {
  code: ErrorCode;
  subject: string;
}

export interface SafeFailure {
  /** Safe to save and send: bounded, and never any of the thrown message's text. */
  error: SafeError;
  /** The raw text of what was thrown, for the worker's local debug log only; never saved or sent. */
  debug: string;
}

/** Where the raw text of a failure goes: the worker's stderr. Never the store, never a client. */
export type DebugLog = (line: string) => void;

const MAX_DEBUG_CHARS = 2_000;

/** A class name is code, not data; anything else in `name` is not trusted. */
function className(error: Error): string {
  return /^[A-Za-z_$][\w$]{0,63}$/.test(error.name) ? error.name : "Error";
}

/** System and library codes (`ENOENT`, `ERR_INVALID_URL`, `invalid_params`) say what failed without data. */
function errorCodeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^(?:[A-Z][A-Z0-9_]{1,39}|[a-z][a-z0-9_]{1,39})$/.test(code)
    ? code
    : undefined;
}

function withArticle(word: string): string {
  return `${/^[AEIOU]/i.test(word) ? "an" : "a"} ${word}`;
}

function zodIssuesOf(error: Error): readonly unknown[] | undefined {
  const issues = (error as { issues?: unknown }).issues;
  return className(error) === "ZodError" && Array.isArray(issues) ? issues : undefined;
}

function savedMessage(thrown: unknown, subject: string): string {
  // Both messages are safe to keep: the author's own words, or piw's naming fields only.
  if (isWorkflowError(thrown) || isProgressInvalid(thrown)) return `${subject} failed: ${thrown.message}`;
  if (thrown instanceof RoutingError) return asSentence(`${subject} could not route: ${thrown.message}`);
  if (!(thrown instanceof Error)) {
    return `${subject} threw ${thrown === null ? "null" : withArticle(typeof thrown)}, not an Error.`;
  }
  const issues = zodIssuesOf(thrown);
  if (issues) return `${subject} threw a ZodError: ${describeIssues(issues)}.`;
  const code = errorCodeOf(thrown);
  return `${subject} threw ${withArticle(className(thrown))}${code ? ` (${code})` : ""}.`;
}

function rawText(thrown: unknown): string {
  if (thrown instanceof Error) {
    const frames = (thrown.stack ?? "")
      .split("\n")
      .filter((line) => /^\s+at\s/.test(line))
      .slice(0, 4)
      .map((line) => line.trim());
    return [`${thrown.name}: ${thrown.message}`, ...frames].join(" | ");
  }
  try {
    return `${typeof thrown}: ${typeof thrown === "string" ? thrown : JSON.stringify(thrown)}`;
  } catch {
    return `${typeof thrown} (unprintable)`;
  }
}

/**
 * The one normalizer from a thrown value to a saved error. Our own signals keep their safe messages;
 * a WorkflowError keeps its author's message; anything else is described by its class (and system
 * code, and a ZodError by its issue paths), never by its message.
 */
export function toSafeError(thrown: unknown, site: FailureSite): SafeFailure {
  const debug = boundSafeMessage(`${site.subject}: ${rawText(thrown)}`, MAX_DEBUG_CHARS);
  if (thrown instanceof NodeFailure) return { error: safeError(thrown.code, thrown.message), debug };
  if (thrown instanceof ScopeInputError) return { error: safeError("input_invalid", thrown.message), debug };
  return { error: safeError(site.code, savedMessage(thrown, site.subject)), debug };
}
