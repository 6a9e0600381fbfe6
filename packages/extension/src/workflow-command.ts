import { WorkflowError } from "./host-link.js";

const RUN_VERBS = new Set(["status", "pause", "resume", "cancel", "restart"]);

/** Split command arguments like a shell would for simple cases: spaces, and '…' or "…" quoting. */
export function splitArguments(text: string): string[] {
  const words: string[] = [];
  let current = "";
  let quote: '"' | "'" | undefined;
  let inWord = false;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
      continue;
    }
    if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quote) throw new WorkflowError(`Unclosed ${quote} in the /workflow arguments.`);
  if (inWord) words.push(current);
  return words;
}

/**
 * The raw text after the first `count` words: JSON keeps its own quotes this way. One pair of
 * single quotes around the whole of it (shell habit) is removed.
 */
function rawTail(text: string, count: number): string {
  const tail = text.replace(new RegExp(`^\\s*(?:\\S+\\s+){${count}}`), "").trim();
  return tail.length >= 2 && tail.startsWith("'") && tail.endsWith("'") ? tail.slice(1, -1) : tail;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new WorkflowError(
      `${what} is not valid JSON: ${error instanceof Error ? error.message : "unreadable"}.`,
    );
  }
}

/**
 * `/workflow` arguments as tool arguments, so the command and the tool share one lifecycle:
 * bare → list; `<verb> <runId>`; `answer <runId> <json>`; `submit <json>`;
 * `<name> [task words] [--input-json <json>]` → start.
 */
export function parseWorkflowCommand(args: string): Record<string, unknown> {
  const words = splitArguments(args);
  const [first, ...rest] = words;
  if (first === undefined || first === "list") return { action: "list" };
  if (RUN_VERBS.has(first)) return { action: first, ...(rest[0] === undefined ? {} : { runId: rest[0] }) };
  if (first === "answer") {
    const [runId, ...answer] = rest;
    if (runId === undefined || answer.length === 0) {
      throw new WorkflowError("Usage: /workflow answer <runId> <answer as JSON>");
    }
    return { action: "answer", runId, answer: parseJson(rawTail(args, 2), "The answer") };
  }
  if (first === "submit") {
    if (rest.length === 0) throw new WorkflowError("Usage: /workflow submit <output as JSON>");
    return { action: "submit", output: parseJson(rawTail(args, 1), "The output") };
  }
  const flag = rest.indexOf("--input-json");
  if (flag >= 0) {
    if (flag > 0) throw new WorkflowError("Give the input as task words or with --input-json, not both.");
    if (rest.length === 1) throw new WorkflowError("--input-json needs the input as JSON.");
    return { action: "start", workflow: first, input: parseJson(rawTail(args, 2), "--input-json") };
  }
  return { action: "start", workflow: first, ...(rest.length > 0 ? { task: rest.join(" ") } : {}) };
}
