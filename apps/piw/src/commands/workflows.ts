import type { StartableWorkflow } from "@piw/engine";
import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { type WorkflowEntry, workflowsOutput } from "../output-schemas.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { preflightOptions } from "../preflight.js";
import { COMMAND_USAGE } from "../usage.js";

/** `piw workflows`: what a name starts here, found as `piw run <name>` finds it. */
export async function workflowsCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("workflows", args, COMMAND_TABLE.workflows.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.workflows);
    return ExitCode.ok;
  }
  if (positionals.length > 0) {
    throw usageError(`unexpected argument ${JSON.stringify(positionals[0])}`, "workflows");
  }
  const { describeStartableWorkflows } = await import("@piw/engine");
  const found = await describeStartableWorkflows(ctx.io.cwd, await preflightOptions(ctx.io.env));
  const entries = found.map(entryOf);
  if (values.json) ctx.printJson(workflowsOutput(entries));
  else for (const line of renderWorkflows(entries)) ctx.print(line);
  return ExitCode.ok;
}

function entryOf(found: StartableWorkflow): WorkflowEntry {
  const source = { kind: found.origin.kind, path: found.origin.path };
  if (found.kind === "refused") {
    const problem = [found.refusal.message, ...found.refusal.problems].join(" ");
    return {
      name: found.name,
      title: null,
      source,
      input: null,
      takesInput: null,
      summary: null,
      textInput: null,
      agentSteps: [],
      problem,
    };
  }
  const { title, input, takesInput, summary, textInput, agentSteps } = found.workflow;
  return {
    name: found.name,
    title,
    source,
    input,
    takesInput,
    summary,
    textInput,
    agentSteps,
    problem: null,
  };
}

/**
 * `task, notes?` (`?`: optional; `<words>`: where free words go), or what kind of input the workflow
 * takes when it has no keys to name.
 */
function inputSummary(entry: WorkflowEntry): string {
  if (entry.problem !== null) return "-";
  if (entry.takesInput === false) return "none";
  if (entry.input === null) return "JSON";
  if (entry.input.keys.length === 0) return "{}";
  const words = (key: string) => (key === entry.textInput && key !== "task" ? `${key} <words>` : key);
  return entry.input.keys
    .map((key) => (entry.input?.required.includes(key) ? words(key) : `${words(key)}?`))
    .join(", ");
}

function renderWorkflows(entries: readonly WorkflowEntry[]): string[] {
  if (entries.length === 0) {
    return ["no workflows here: add <name>.workflow.ts to .pi/workflows/ (see piw run --help)"];
  }
  const rows = entries.map((entry) => [
    entry.name,
    entry.problem === null ? (entry.title ?? "") : "(cannot start)",
    inputSummary(entry),
    entry.agentSteps.length > 0 ? `${entry.source.kind}, needs Pi` : entry.source.kind,
  ]);
  const header = ["NAME", "TITLE", "INPUT", "SOURCE"];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
  // Each row, then its one-line purpose when the workflow gives one.
  const lines = [line(header)];
  rows.forEach((row, i) => {
    lines.push(line(row));
    const summary = entries[i]?.summary;
    if (summary) lines.push(`  ${summary}`);
  });
  for (const entry of entries) {
    if (entry.problem !== null) lines.push(`${entry.name}: ${entry.problem}`);
  }
  return lines;
}
