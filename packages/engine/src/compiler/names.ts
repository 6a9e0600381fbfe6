/** Words the `/workflow` command and the `workflow` tool use themselves; no workflow may take them. */
export const RESERVED_WORKFLOW_NAMES: readonly string[] = [
  "answer",
  "cancel",
  "list",
  "pause",
  "restart",
  "resume",
  "status",
  "submit",
];

// Run IDs embed the workflow name (`<workflow>-<time>-<random>`), so names use run-ID characters only.
const WORKFLOW_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

// One segment of a compiled path (see nodePathSchema): no `/` and no `.` (`.` marks `<mount>.<exit>`).
const LOCAL_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** Why `name` cannot name a workflow, or undefined when it can. */
export function workflowNameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || name.length === 0) return "the workflow needs a name";
  if (RESERVED_WORKFLOW_NAMES.includes(name)) {
    return `"${name}" is reserved (${RESERVED_WORKFLOW_NAMES.join(", ")} are workflow commands)`;
  }
  if (!WORKFLOW_NAME.test(name)) {
    return `"${name}" is not a valid workflow name: use letters, digits, '_' and '-' (at most 100)`;
  }
  return undefined;
}

/** Why `name` cannot name a node, include or exit, or undefined when it can. */
export function localNameProblem(name: string, what: string): string | undefined {
  if (LOCAL_NAME.test(name)) return undefined;
  return `${what} name "${name}" is invalid: use letters, digits, '_' and '-' (no '/' or '.', at most 100)`;
}

export function joinPath(scope: string, name: string): string {
  return scope === "" ? name : `${scope}/${name}`;
}
