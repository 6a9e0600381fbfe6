import { WorkflowError } from "./host-link.js";

/** `/workflow schedule …`: what to type. */
export const SCHEDULE_USAGE =
  '/workflow schedule add <name|path> (--every 30m | --cron "0 9 * * 1-5" [--tz Europe/Berlin]) [task…] ' +
  "[--overlap skip|buffer-one|cancel-previous|allow] [--catch-up none|latest|all] [--catch-up-window 1h] " +
  "[--jitter 30s] [--until <time>] [--name <id>] [--input-json <json>]; /workflow schedule list; " +
  "/workflow schedule pause <name> [note…]; /workflow schedule resume|trigger|delete <name>";

/** The flags of `schedule add` and the tool's field each one fills. */
const ADD_FLAGS: Readonly<Record<string, string>> = {
  "--every": "every",
  "--cron": "cron",
  "--tz": "tz",
  "--overlap": "overlap",
  "--catch-up": "catchUp",
  "--catch-up-window": "catchUpWindow",
  "--jitter": "jitter",
  "--until": "until",
  "--name": "name",
  "--input-json": "input",
};

/** Words, where a word in double or single quotes may hold spaces ("0 9 * * 1-5"). */
function words(text: string): string[] {
  const found: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of text.matchAll(pattern)) found.push(match[1] ?? match[2] ?? match[3] ?? "");
  return found;
}

function problem(text: string): WorkflowError {
  return new WorkflowError(`${text}\nUsage: ${SCHEDULE_USAGE}`);
}

/** `/workflow schedule <op> …` as the tool's `schedule` arguments (checked afterwards like the tool's). */
export function scheduleArguments(rest: string): Record<string, unknown> {
  const [op, ...args] = words(rest);
  switch (op) {
    case undefined:
    case "list":
      return { action: "schedule", op: "list" };
    case "add":
      return addArguments(args);
    case "pause": {
      const [name, ...note] = args;
      if (name === undefined) throw problem("/workflow schedule pause needs the schedule's name.");
      return { action: "schedule", op, name, ...(note.length > 0 ? { note: note.join(" ") } : {}) };
    }
    case "resume":
    case "trigger":
    case "delete": {
      const [name, ...extra] = args;
      if (name === undefined || extra.length > 0)
        throw problem(`/workflow schedule ${op} takes one schedule name.`);
      return { action: "schedule", op, name };
    }
    default:
      throw problem(`Unknown schedule command ${JSON.stringify(op.slice(0, 40))}.`);
  }
}

function addArguments(args: string[]): Record<string, unknown> {
  const [workflow, ...rest] = args;
  if (workflow === undefined) throw problem("/workflow schedule add needs a workflow name or path.");
  const fields: Record<string, unknown> = { action: "schedule", op: "add", workflow };
  const task: string[] = [];
  for (let i = 0; i < rest.length; i += 1) {
    const word = rest[i] ?? "";
    const field = ADD_FLAGS[word];
    if (field === undefined) {
      task.push(word);
      continue;
    }
    const value = rest[i + 1];
    if (value === undefined) throw problem(`${word} needs a value.`);
    i += 1;
    if (field === "input") {
      try {
        fields.input = JSON.parse(value);
      } catch {
        throw problem("--input-json is not valid JSON.");
      }
    } else fields[field] = value;
  }
  if (task.length > 0) fields.task = task.join(" ");
  return fields;
}
