import type { RunSnapshot } from "@piw/protocol";
import type { CompiledWorkflow } from "./compiled-workflow.js";
import { describeIssues } from "./schema-issues.js";

/**
 * Whether a run's saved position still fits a changed definition of its workflow, so that a resume
 * may go on under it: every saved node visit's path is a node of the same kind, every path a saved
 * visit leads to is a node, and every saved output the new definition holds to a schema (an agent
 * step's output, a checkpoint's answer) still matches it. Returns the first reason it does not, or
 * null. The reason names paths and schema words only, never a saved value.
 */
export function resumeProblem(workflow: CompiledWorkflow, snapshot: RunSnapshot): string | null {
  // The saved nodes first: a missing one is the plainest reason, whatever led to it.
  for (const visit of snapshot.visits) {
    const node = workflow.nodes.get(visit.path);
    if (node === undefined) return `the saved node ${visit.path} is not in the changed workflow`;
    if (node.kind !== visit.nodeKind) {
      return `${visit.path} is now ${kindName(node.kind)} node; the run saved ${kindName(visit.nodeKind)} node there`;
    }
  }
  for (const visit of snapshot.visits) {
    if (visit.nextPath !== null && !workflow.nodes.has(visit.nextPath)) {
      return `${visit.path} led to ${visit.nextPath}, which is not in the changed workflow`;
    }
    if (visit.status !== "succeeded") continue;
    const problem = outputProblem(workflow, visit.path, visit.output ?? null);
    if (problem !== null) return problem;
  }
  const carried = snapshot.accepted ? [[snapshot.accepted.path, snapshot.accepted.answer] as const] : [];
  for (const [path, output] of [...Object.entries(snapshot.carriedOutputs), ...carried]) {
    if (!workflow.nodes.has(path)) return `the saved node ${path} is not in the changed workflow`;
    const problem = outputProblem(workflow, path, output);
    if (problem !== null) return problem;
  }
  return null;
}

function outputProblem(workflow: CompiledWorkflow, path: string, output: unknown): string | null {
  const node = workflow.nodes.get(path);
  const schema = node?.kind === "agent" ? node.output : node?.kind === "checkpoint" ? node.answer : undefined;
  if (schema === undefined) return null;
  const parsed = schema.safeParse(output);
  if (parsed.success) return null;
  const what = node?.kind === "agent" ? "output" : "answer";
  return `the saved ${what} of ${path} does not match its changed schema: ${describeIssues(parsed.error.issues, `(${what})`)}`;
}

/** "an agent", "a shell": a node kind with its article. */
function kindName(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}
