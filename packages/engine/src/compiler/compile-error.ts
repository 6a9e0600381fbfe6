/** One thing wrong with a workflow definition, at the full path of what it is about. */
export interface CompileProblem {
  /**
   * A full compiled path: a node or include (`docs/workspace/inspect`), an exit (`docs/ready`), an
   * include exit edge (`docs/design.ready`), or a workflow field after `:` (`docs:startAt`, `:startAt`).
   */
  path: string;
  message: string;
}

/** Thrown by `compileWorkflow` with every problem it found, never only the first. */
export class CompileError extends Error {
  override readonly name = "CompileError";
  readonly problems: readonly CompileProblem[];

  constructor(workflow: string, problems: readonly CompileProblem[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    const list = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
    super(`workflow "${workflow}" has ${count}: ${list}`);
    this.problems = problems;
  }
}
