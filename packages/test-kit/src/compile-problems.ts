import { CompileError, type CompileProblem, compileWorkflow, type WorkflowDefinition } from "@piw/engine";

/** The problems the compiler reports for a workflow it must refuse; throws if it compiles or fails otherwise. */
export function problemsOf(definition: WorkflowDefinition): CompileProblem[] {
  try {
    compileWorkflow(definition);
  } catch (error) {
    if (error instanceof CompileError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a CompileError");
}
