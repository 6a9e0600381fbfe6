import { findBuiltinDefinition } from "../loader/builtin-registry.js";
import type { WorkflowDefinition } from "./define-workflow.js";
import { WorkflowError } from "./workflow-error.js";

/**
 * A workflow piw ships, by name, for `includeWorkflow` (or `parallel`): a workflow file cannot import
 * the built-ins' package, so it asks the registry the worker filled before it loaded the file.
 */
export function builtinWorkflow(name: string): WorkflowDefinition {
  const found = findBuiltinDefinition(name);
  if (found === undefined) {
    throw new WorkflowError(
      `No built-in workflow has the name ${JSON.stringify(name.slice(0, 100))}; piw workflows lists them.`,
    );
  }
  return found;
}
