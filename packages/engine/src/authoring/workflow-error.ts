/** Marks a WorkflowError across engine copies (each workflow load may see another module instance). */
const WORKFLOW_ERROR = Symbol.for("piw.workflow-error");

/**
 * An error whose message the workflow's author vouches for. piw saves and shows this message as
 * written (bounded); from any other thrown value it keeps only the class, because a message can
 * quote the input, an environment variable or an effect's result.
 */
export class WorkflowError extends Error {
  override readonly name = "WorkflowError";
  readonly [WORKFLOW_ERROR] = true;
}

export function isWorkflowError(value: unknown): value is WorkflowError {
  return value instanceof Error && (value as { [WORKFLOW_ERROR]?: unknown })[WORKFLOW_ERROR] === true;
}
