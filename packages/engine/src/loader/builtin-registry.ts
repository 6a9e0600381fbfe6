import type { WorkflowDefinition } from "../authoring/define-workflow.js";
import { workflowNameProblem } from "../compiler/names.js";
import { builtinRevision } from "./builtin-revision.js";

/** A workflow shipped with piw; `revision` changes whenever its definition does. */
export interface BuiltinWorkflow {
  definition: WorkflowDefinition;
  revision: string;
}

/** A registered built-in: its revision is computed when a run first asks for it (see `findBuiltinWorkflow`). */
interface Registered {
  definition: WorkflowDefinition;
  source: string | undefined;
  revision?: string;
}

// Resolution checks this after the project and home folders, so a user file can shadow a built-in.
const builtins = new Map<string, Registered>();

/**
 * Registers a built-in workflow under its name; returns a function that removes it again. Its revision
 * (what its definition and `source`, the digest of its source files, hash to) is computed on first use:
 * that compiles the definition, which for all the built-ins together would cost a worker or a preflight
 * child tens of milliseconds of start-up for runs that use none of them.
 */
export function registerBuiltinWorkflow(
  definition: WorkflowDefinition,
  options: { source?: string } = {},
): () => void {
  const problem = workflowNameProblem(definition.name);
  if (problem !== undefined) throw new Error(`cannot register built-in workflow: ${problem}`);
  if (builtins.has(definition.name))
    throw new Error(`built-in workflow "${definition.name}" is already registered`);
  const entry: Registered = { definition, source: options.source };
  builtins.set(definition.name, entry);
  return () => {
    if (builtins.get(definition.name) === entry) builtins.delete(definition.name);
  };
}

/** A built-in with its revision. A definition that does not compile throws: that is a bug of piw's. */
export function findBuiltinWorkflow(name: string): BuiltinWorkflow | undefined {
  const entry = builtins.get(name);
  if (entry === undefined) return undefined;
  entry.revision ??= builtinRevision(entry.definition, entry.source);
  return { definition: entry.definition, revision: entry.revision };
}

/** A built-in's definition alone (for `includeWorkflow`), without computing its revision. */
export function findBuiltinDefinition(name: string): WorkflowDefinition | undefined {
  return builtins.get(name)?.definition;
}

/** The names of the registered built-ins, sorted. */
export function listBuiltinWorkflowNames(): string[] {
  return [...builtins.keys()].sort();
}
