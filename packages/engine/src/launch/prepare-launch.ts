import { readdirSync } from "node:fs";
import type { JsonValue, ReservePreparedRun } from "@piw/protocol";
import type { LoadedWorkflow } from "../loader/load-workflow-file.js";
import { WORKFLOW_FILE_SUFFIX } from "../loader/load-workflow-file.js";
import { resolveWorkflow, workflowSearchDirs } from "../loader/resolve-workflow.js";
import { WorkflowLoadError } from "../loader/workflow-load-error.js";
import { fieldName } from "../compiler/known-fields.js";
import { describeInputKeys, inputKeysOf, unknownInputKeys } from "./input-keys.js";
import { LaunchRefused } from "./launch-refused.js";

export interface LaunchRequest {
  /** A workflow name or a path to a `<name>.workflow.ts` file. */
  ref: string;
  cwd: string;
  /**
   * Free words; they become the workflow's `textInput` field (`{ task }` by default) when it takes
   * input and no whole input is given.
   */
  task?: string | undefined;
  /** The whole input, when given. */
  input?: JsonValue | undefined;
}

export interface PreparedLaunch {
  loaded: LoadedWorkflow;
  input: JsonValue;
  /** Said before the run starts, e.g. that the task was ignored. */
  notes: string[];
}

/** Where a validation issue sits, as a reader would write it: `items[2].title`, or `(input)`. */
export function describeIssuePath(path: readonly PropertyKey[], root = "(input)"): string {
  if (path.length === 0) return root;
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("");
}

/** Resolve and compile a workflow; a failure is a refusal naming every compile problem. */
export async function loadForLaunch(ref: string, cwd: string): Promise<LoadedWorkflow> {
  try {
    return await resolveWorkflow(ref, { cwd });
  } catch (error) {
    if (!(error instanceof WorkflowLoadError)) throw error;
    if (error.problems.length === 0) throw new LaunchRefused(error.code, error.message, [], false);
    throw new LaunchRefused(
      error.code,
      `workflow ${ref} is invalid:`,
      error.problems.map((problem) => `${problem.path}: ${problem.message}`),
      false,
    );
  }
}

/**
 * Everything checked before the host saves a run (the launch preflight rule): the workflow resolves and
 * compiles, and the input matches its schema. Throws `LaunchRefused`; never writes anything.
 */
export async function prepareLaunch(request: LaunchRequest): Promise<PreparedLaunch> {
  return prepareInput(await loadForLaunch(request.ref, request.cwd), request);
}

/** The input check of `prepareLaunch`, for a workflow the caller already loaded. */
export async function prepareInput(
  loaded: LoadedWorkflow,
  request: Pick<LaunchRequest, "task" | "input">,
): Promise<PreparedLaunch> {
  const { workflow } = loaded;
  const notes: string[] = [];
  const task = request.task?.trim() ? request.task.trim() : undefined;
  let input: JsonValue;
  if (request.input !== undefined) {
    input = request.input;
  } else if (workflow.inputSchema === undefined) {
    if (task !== undefined) {
      throw new LaunchRefused("input_invalid", `workflow ${loaded.name} takes no input; give no task words`);
    }
    input = null;
  } else {
    input = task !== undefined ? { [workflow.textInput]: task } : {};
  }
  if (workflow.inputSchema !== undefined) {
    refuseUnknownKeys(loaded, input, request.input === undefined);
    const checked = await workflow.inputSchema.safeParseAsync(input);
    if (!checked.success) {
      const problems = checked.error.issues.map(
        (issue) => `${describeIssuePath(issue.path)}: ${issue.message}`,
      );
      if (request.input === undefined && task === undefined) {
        problems.push("(no input was given: pass a task, or the whole input as JSON)");
      }
      throw new LaunchRefused(
        "input_invalid",
        `the input does not match workflow ${loaded.name}'s input:`,
        problems,
      );
    }
  }
  return { loaded, input, notes };
}

/**
 * A key the input schema does not have would be dropped without a word: refuse it, naming the keys
 * the workflow takes. Free words become the `textInput` field, so a workflow without it refuses them here.
 */
function refuseUnknownKeys(loaded: LoadedWorkflow, input: JsonValue, fromTask: boolean): void {
  const { name, workflow } = loaded;
  if (workflow.inputSchema === undefined) return;
  const known = inputKeysOf(workflow.inputSchema);
  if (known === undefined) return;
  const unknown = unknownInputKeys(input, known);
  if (unknown.length === 0) return;
  const keys = `its input keys are: ${describeInputKeys(known)}`;
  if (fromTask) {
    // Only the default field can be missing: the compiler checks a named `textInput`.
    throw new LaunchRefused("input_invalid", `workflow ${name} takes no task words; ${keys}`, [
      "give the whole input as JSON instead",
    ]);
  }
  throw new LaunchRefused(
    "input_invalid",
    `workflow ${name}'s input has no ${unknown.map((key) => fieldName(key)).join(", ")}; ${keys}`,
  );
}

/** The agent steps of a prepared workflow (they need a Pi session to run). */
export function agentStepPaths(loaded: LoadedWorkflow): string[] {
  return loaded.workflow.manifest.nodes.filter((node) => node.kind === "agent").map((node) => node.path);
}

/**
 * Refuse a workflow with agent steps pinned to the conversation for a run that has no Pi session to
 * run them in. Its other agent steps run in isolated Pi sessions, opened by the worker.
 */
export function refuseAgentStepsWithoutPi(loaded: LoadedWorkflow): void {
  const pinned = [...loaded.workflow.nodes.values()]
    .filter((node) => node.kind === "agent" && node.session === "conversation")
    .map((node) => node.path);
  if (pinned.length === 0) return;
  throw new LaunchRefused(
    "input_invalid",
    `workflow ${loaded.name} has agent steps that run in the Pi conversation (${pinned.join(", ")}): ` +
      `start it from Pi with /workflow ${loaded.name} <task>`,
  );
}

/** The `runs.reserve` request for a prepared launch; the host allocates the run ID. */
export function reserveRequest(
  prepared: PreparedLaunch,
  where: { origin: ReservePreparedRun["origin"]; workingDir: string },
): Omit<ReservePreparedRun, "runId"> {
  const { loaded, input } = prepared;
  return {
    workflowName: loaded.name,
    source: loaded.source,
    definitionDigest: loaded.workflow.digest,
    manifest: loaded.workflow.manifest as unknown as JsonValue,
    input,
    origin: where.origin,
    workingDir: where.workingDir,
    ...(loaded.workflow.presentationPrompt === undefined
      ? {}
      : { presentationInstructions: loaded.workflow.presentationPrompt }),
    ...(loaded.workflow.budget === undefined ? {} : { budget: loaded.workflow.budget }),
  };
}

/** Workflow names a user can start from `cwd`, in search order, each with where it was found. */
export function listWorkflowFiles(cwd: string): Array<{ name: string; dir: string }> {
  const seen = new Set<string>();
  const found: Array<{ name: string; dir: string }> = [];
  for (const dir of workflowSearchDirs({ cwd })) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const entry of entries.sort()) {
      if (!entry.endsWith(WORKFLOW_FILE_SUFFIX)) continue;
      const name = entry.slice(0, -WORKFLOW_FILE_SUFFIX.length);
      if (seen.has(name)) continue;
      seen.add(name);
      found.push({ name, dir });
    }
  }
  return found;
}
