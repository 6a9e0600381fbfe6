import { boundSafeMessage, type ErrorCode, type SafeError, safeError } from "@piw/protocol";
import type { CompileProblem } from "../compiler/compile-error.js";

export type WorkflowLoadErrorCode = Extract<ErrorCode, "workflow_not_found" | "workflow_invalid">;

/**
 * Why a workflow could not be resolved, loaded or compiled. The message is bounded and holds first
 * lines only, never a stack: it is shown where the load ran (preflight). What is saved (`toSafeError`)
 * may be shorter: a file whose top level threw is saved by the error's class, since the thrown text
 * can quote an environment variable.
 */
export class WorkflowLoadError extends Error {
  override readonly name = "WorkflowLoadError";
  readonly code: WorkflowLoadErrorCode;
  /** The compiler's problems when the workflow failed to compile; empty otherwise. */
  readonly problems: readonly CompileProblem[];

  /** The message to save, when it must say less than `message`. */
  private readonly savedMessage: string | undefined;

  constructor(
    code: WorkflowLoadErrorCode,
    message: string,
    problems: readonly CompileProblem[] = [],
    savedMessage?: string,
  ) {
    super(boundSafeMessage(message));
    this.code = code;
    this.problems = problems;
    this.savedMessage = savedMessage;
  }

  toSafeError(): SafeError {
    return safeError(this.code, this.savedMessage ?? this.message);
  }
}

/**
 * The leading lines of what was thrown (a parse error puts `file:line:col` on its second line), stopping
 * before any stack frame or code frame.
 */
export function summaryOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines: string[] = [];
  for (const raw of text.split("\n").slice(0, 3)) {
    const line = raw.trim();
    if (/^at\s/.test(line) || /^(>|\d+\s*\|)/.test(line)) break;
    if (line !== "") lines.push(line);
  }
  return lines.join(" ") || "unknown error";
}
