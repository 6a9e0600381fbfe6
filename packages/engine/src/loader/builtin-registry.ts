import type { WorkflowDefinition } from "../authoring/define-workflow.js";
import { workflowNameProblem } from "../compiler/names.js";
import { builtinRevision } from "./builtin-revision.js";

/** A workflow shipped with piw; `revision` changes whenever its definition does. */
export interface BuiltinWorkflow {
  definition: WorkflowDefinition;
  revision: string;
}

// Resolution checks this after the project and home folders, so a user file can shadow a built-in.
const builtins = new Map<string, BuiltinWorkflow>();

/**
 * Registers a built-in workflow under its name, with the revision its definition and `source` (the
 * digest of its source files) hash to; returns a function that removes it again. A definition that does
 * not compile throws: that is a bug of piw's.
 */
export function registerBuiltinWorkflow(
  definition: WorkflowDefinition,
  options: { source?: string } = {},
): () => void {
  const problem = workflowNameProblem(definition.name);
  if (problem !== undefined) throw new Error(`cannot register built-in workflow: ${problem}`);
  if (builtins.has(definition.name))
    throw new Error(`built-in workflow "${definition.name}" is already registered`);
  const entry = { definition, revision: builtinRevision(definition, options.source) };
  builtins.set(definition.name, entry);
  return () => {
    if (builtins.get(definition.name) === entry) builtins.delete(definition.name);
  };
}

export function findBuiltinWorkflow(name: string): BuiltinWorkflow | undefined {
  return builtins.get(name);
}

/** The names of the registered built-ins, sorted. */
export function listBuiltinWorkflowNames(): string[] {
  return [...builtins.keys()].sort();
}
