import { boundSafeMessage, type ErrorCode, type SafeError } from "@piw/protocol";
import type { CompileProblem } from "../compiler/compile-error.js";

export type WorkflowLoadErrorCode = Extract<ErrorCode, "workflow_not_found" | "workflow_invalid">;

/**
 * Why a workflow could not be resolved, loaded or compiled. The message is bounded and safe to store or
 * show: built from first lines only, never a stack, input or prompt.
 */
export class WorkflowLoadError extends Error {
  override readonly name = "WorkflowLoadError";
  readonly code: WorkflowLoadErrorCode;
  /** The compiler's problems when the workflow failed to compile; empty otherwise. */
  readonly problems: readonly CompileProblem[];

  constructor(code: WorkflowLoadErrorCode, message: string, problems: readonly CompileProblem[] = []) {
    super(boundSafeMessage(message));
    this.code = code;
    this.problems = problems;
  }

  toSafeError(): SafeError {
    return { code: this.code, message: this.message };
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
