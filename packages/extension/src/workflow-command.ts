import type { CurrentRunVerb } from "./current-run.js";
import { WorkflowError } from "./host-link.js";
import { SCHEDULE_USAGE, scheduleArguments } from "./schedule-command.js";
import { parseAction, type WorkflowAction, type WorkflowActionName } from "./workflow-actions.js";

/** A `/workflow` line: an action, or a run verb without a run ID, for the session's current run. */
export type WorkflowCommand = WorkflowAction | { action: Exclude<CurrentRunVerb, "status">; current: true };

/** What to type for each subcommand: every refused `/workflow` line ends with its usage. */
export const WORKFLOW_USAGE: Readonly<Record<WorkflowActionName, string>> = {
  list: "/workflow list — the workflows you can start here and this session's runs",
  start:
    "/workflow <name> [--budget usd=2,tokens=500k] [task…] — everything after the name is the task, as typed; or /workflow <name> --input-json <json>",
  status: "/workflow status [runId] — without a run ID, this session's active run, else its latest run",
  pause:
    "/workflow pause [runId] — without a run ID, this session's active run; /workflow list shows the run IDs",
  resume:
    "/workflow resume [runId] [--budget usd=5] — without a run ID, this session's latest parked run; --budget raises the limits of a run parked at its budget",
  cancel:
    "/workflow cancel [runId] — without a run ID, this session's active run; /workflow list shows the run IDs",
  restart: "/workflow restart <runId> — the finished run to run again; /workflow list shows the run IDs",
  answer: "/workflow answer <runId> <answer as JSON> — the run waiting at a checkpoint, and its answer",
  submit: "/workflow submit <output as JSON> — the output the current workflow step asks for",
  update:
    '/workflow update <progress as JSON> — the current workflow step\'s progress, e.g. {"done":3,"total":10}',
  schedule: SCHEDULE_USAGE,
};

const RUN_VERBS = new Set<WorkflowActionName>(["status", "pause", "resume", "cancel", "restart"]);
const CURRENT_RUN_VERBS = new Set<WorkflowActionName>(["pause", "resume", "cancel"]);
const INPUT_FLAG = "--input-json";

function usage(action: WorkflowActionName, problem?: string): WorkflowError {
  const lead = problem === undefined ? "" : `${problem}\n`;
  return new WorkflowError(`${lead}Usage: ${WORKFLOW_USAGE[action]}`);
}

/** The first word of `text` (whitespace-separated), and the text after it with its spaces trimmed. */
function firstWord(text: string): { word: string; rest: string } {
  const trimmed = text.trimStart();
  const end = trimmed.search(/\s/);
  if (end < 0) return { word: trimmed, rest: "" };
  return { word: trimmed.slice(0, end), rest: trimmed.slice(end).trim() };
}

/** The leading word, or a quoted one ("./my flows/x.workflow.ts") without its quotes. */
function leadingName(text: string): { word: string; rest: string } {
  const trimmed = text.trimStart();
  const quote = trimmed[0];
  if (quote === "'" || quote === '"') {
    const close = trimmed.indexOf(quote, 1);
    const after = trimmed.slice(close + 1);
    if (close > 1 && (after === "" || /^\s/.test(after))) {
      return { word: trimmed.slice(1, close), rest: after.trim() };
    }
  }
  return firstWord(trimmed);
}

/**
 * One pair of matching quotes around the whole of `text` is removed (shell habit); any other quote
 * is part of the text. Quoting is never required, and an unbalanced quote is not an error.
 */
function unquote(text: string, quotes: readonly string[] = ["'", '"']): string {
  const quote = text[0];
  if (text.length < 2 || quote === undefined || !quotes.includes(quote) || !text.endsWith(quote)) return text;
  const inner = text.slice(1, -1);
  return inner.includes(quote) ? text : inner;
}

function parseJson(text: string, action: WorkflowActionName, what: string): unknown {
  try {
    // Only single quotes: a JSON string keeps its double quotes.
    return JSON.parse(unquote(text, ["'"]));
  } catch (error) {
    const why = error instanceof Error ? error.message.slice(0, 200) : "unreadable";
    throw usage(action, `${what} is not valid JSON: ${why}.`);
  }
}

/**
 * A `--budget <limits>` taken out of `text`: first of all (before a start's task words, which are
 * free text) or, `anywhere`, beside a resume's run ID. The limits are checked with the action.
 */
function budgetFlag(text: string, anywhere = false): { budget?: string; rest: string } {
  const match = (anywhere ? /(^|\s)--budget(?:=|\s+)(\S+)/ : /^()--budget(?:=|\s+)(\S+)/).exec(text);
  if (!match) return { rest: text };
  const rest = `${text.slice(0, match.index)} ${text.slice(match.index + match[0].length)}`.trim();
  return { budget: match[2] ?? "", rest };
}

/** The one argument a run verb takes: a run ID, which is a single word. */
function runIdOf(rest: string, action: WorkflowActionName): string | undefined {
  if (rest === "") return undefined;
  const { word, rest: extra } = firstWord(rest);
  if (extra !== "") throw usage(action, `/workflow ${action} takes one run ID and nothing after it.`);
  return unquote(word);
}

/** `/workflow` arguments as tool arguments, before the shared check of each action's fields. */
function commandArguments(args: string): Record<string, unknown> {
  const { word: first, rest } = leadingName(args);
  if (first === "" || first === "list") {
    if (rest !== "") throw usage("list", "/workflow list takes no arguments.");
    return { action: "list" };
  }
  const verb = first as WorkflowActionName;
  if (verb === "schedule") return scheduleArguments(rest);
  if (RUN_VERBS.has(verb)) {
    if (verb === "resume") {
      const { budget, rest: left } = budgetFlag(rest, true);
      if (budget !== undefined) {
        const runId = runIdOf(left, verb);
        if (runId === undefined) throw usage("resume", "/workflow resume --budget needs the run ID.");
        return { action: "resume", runId, budget };
      }
    }
    const runId = runIdOf(rest, verb);
    if (runId === undefined && CURRENT_RUN_VERBS.has(verb)) return { action: verb, current: true };
    if (runId === undefined && verb !== "status") throw usage(verb, `/workflow ${verb} needs a run ID.`);
    return runId === undefined ? { action: verb } : { action: verb, runId };
  }
  if (verb === "answer") {
    const { word: runId, rest: answer } = firstWord(rest);
    if (runId === "") throw usage("answer", "/workflow answer needs a run ID and an answer.");
    if (answer === "") throw usage("answer", "/workflow answer needs the answer after the run ID.");
    return { action: "answer", runId: unquote(runId), answer: parseJson(answer, "answer", "The answer") };
  }
  if (verb === "submit") {
    if (rest === "") throw usage("submit", "/workflow submit needs the output.");
    return { action: "submit", output: parseJson(rest, "submit", "The output") };
  }
  if (verb === "update") {
    const progress = rest === "" ? undefined : parseJson(rest, "update", "The progress");
    if (typeof progress !== "object" || progress === null || Array.isArray(progress))
      throw usage("update", "/workflow update needs the progress as a JSON object.");
    return { ...progress, action: "update" };
  }
  // Anything else names a workflow; the words after it are free text, passed as typed.
  const workflow = first;
  const { budget, rest: afterBudget } = budgetFlag(rest);
  const withBudget = budget === undefined ? {} : { budget };
  const flag = firstWord(afterBudget);
  if (flag.word === INPUT_FLAG) {
    if (flag.rest === "") throw usage("start", `${INPUT_FLAG} needs the input as JSON.`);
    return { action: "start", workflow, ...withBudget, input: parseJson(flag.rest, "start", INPUT_FLAG) };
  }
  return afterBudget === ""
    ? { action: "start", workflow, ...withBudget }
    : { action: "start", workflow, ...withBudget, task: unquote(afterBudget) };
}

/**
 * Parses a `/workflow` line into the action the `workflow` tool would run, so the command and the
 * tool share one lifecycle: bare → list; `<verb> <runId>`; `answer <runId> <json>`; `submit <json>`;
 * `<name> [task…]` or `<name> --input-json <json>` → start; `pause`, `resume` or `cancel` alone →
 * the session's current run, chosen when the command runs. A line it cannot use is a WorkflowError
 * that ends with what to type.
 */
export function parseWorkflowCommand(args: string): WorkflowCommand {
  const raw = commandArguments(args);
  if (raw.current === true) return raw as WorkflowCommand;
  try {
    return parseAction(raw);
  } catch (error) {
    const message = error instanceof WorkflowError ? error.message : "The arguments are not valid.";
    throw usage(raw.action as WorkflowActionName, message);
  }
}
