import type { CompiledAgentNode } from "../compiler/compiled-workflow.js";
import { describeIssues } from "../compiler/schema-issues.js";

/** The agent visit a contract is written for. */
export interface ContractPlace {
  runId: string;
  visit: number;
  attempt: number;
  /** The run's workspace folder: the model is told to read and change files there. */
  workspace?: string;
}

/** The exact call that completes a step, as the contract and the reminders write it. */
export const SUBMIT_CALL = '{"action":"submit","output":<the output>}';

/**
 * What ends every agent step prompt: which step this is, the JSON Schema its output must match, and
 * how to submit it. Generated from the compiled node, so authors write only the task.
 */
function stepContract(node: CompiledAgentNode, place: ContractPlace): string {
  const title = node.title !== node.name ? ` "${node.title}"` : "";
  return [
    "---",
    "Workflow step contract",
    `Step: ${node.name}${title} (path ${node.path}, visit ${place.visit}, attempt ${place.attempt}, run ${place.runId})`,
    "Output: one JSON value that matches this JSON Schema:",
    JSON.stringify(node.outputSchema),
    ...(place.workspace === undefined
      ? []
      : [`Workspace: work in ${place.workspace}; read, change and run commands there, not elsewhere.`]),
    `Submit: call the workflow tool with ${SUBMIT_CALL}. A rejected submit names the fields to fix; fix them and submit again.`,
  ].join("\n");
}

/** The prompt the model receives: the author's task, then the contract. */
export function stepPrompt(task: string, node: CompiledAgentNode, place: ContractPlace): string {
  return `${task.trimEnd()}\n\n${stepContract(node, place)}`;
}

/**
 * Why a submission failed the output schema: the failing fields' paths and what the schema wants
 * there, bounded, never the submitted values (describeIssues words every issue from the schema).
 */
export function rejectedOutput(issues: readonly unknown[]): string {
  return `Output rejected: ${describeIssues(issues, "(output)")}. Fix these fields to match the output schema in the step contract and submit again.`;
}
