import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { userWorkflowsDir } from "@piw/state-dir";
import { workflowNameProblem } from "../compiler/names.js";
import { type BuiltinWorkflow, findBuiltinWorkflow } from "./builtin-registry.js";
import {
  compileForLoad,
  type LoadedWorkflow,
  loadWorkflowFile,
  WORKFLOW_FILE_SUFFIX,
} from "./load-workflow-file.js";
import { WorkflowLoadError } from "./workflow-load-error.js";

export interface ResolveWorkflowOptions {
  /** The project folder; its `.pi/workflows/` is searched first. Default: `process.cwd()`. */
  cwd?: string;
  /**
   * The user's home, for `~/` and Pi's default agent folder, whose `workflows/` is searched second
   * (`PI_CODING_AGENT_DIR` moves it). Default: `os.homedir()`.
   */
  homeDir?: string;
}

/** A reference is a path when it has a `/` or names a workflow file; otherwise it is a workflow name. */
export function isWorkflowPath(ref: string): boolean {
  return ref.includes("/") || ref.endsWith(WORKFLOW_FILE_SUFFIX);
}

/** The folders searched for `<name>.workflow.ts`, in order. */
export function workflowSearchDirs(options: ResolveWorkflowOptions = {}): string[] {
  const cwd = resolve(options.cwd ?? process.cwd());
  const home = options.homeDir === undefined ? {} : { homeDir: options.homeDir };
  return [join(cwd, ".pi", "workflows"), userWorkflowsDir(home)];
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds and compiles a workflow by name (project `.pi/workflows/`, then `workflows/` of Pi's agent
 * folder, then the built-ins) or by path. Throws WorkflowLoadError (`workflow_not_found` or `workflow_invalid`).
 */
export async function resolveWorkflow(
  ref: string,
  options: ResolveWorkflowOptions = {},
): Promise<LoadedWorkflow> {
  if (isWorkflowPath(ref)) {
    // `~/` is not expanded when the path arrives through a slash command or the workflow tool.
    const path = ref.startsWith("~/") ? join(options.homeDir ?? homedir(), ref.slice(2)) : ref;
    return loadWorkflowFile(path, { cwd: options.cwd });
  }
  const problem = workflowNameProblem(ref);
  if (problem !== undefined) throw new WorkflowLoadError("workflow_invalid", problem);

  const dirs = workflowSearchDirs(options);
  for (const dir of dirs) {
    const file = join(dir, `${ref}${WORKFLOW_FILE_SUFFIX}`);
    if (await isFile(file)) return loadWorkflowFile(file);
  }
  const builtin = findBuiltinWorkflow(ref);
  if (builtin !== undefined) return compileBuiltin(ref, builtin);
  throw new WorkflowLoadError(
    "workflow_not_found",
    `workflow "${ref}" not found: looked for ${ref}${WORKFLOW_FILE_SUFFIX} in ${dirs.join(" and ")}, and among the built-ins`,
  );
}

function compileBuiltin(id: string, builtin: BuiltinWorkflow): LoadedWorkflow {
  const workflow = compileForLoad(builtin.definition, `built-in workflow "${id}"`);
  return {
    name: id,
    source: { kind: "builtin", id, revision: builtin.revision },
    definition: builtin.definition,
    workflow,
  };
}

/**
 * Compiles the built-in registered under `id`, without looking at any folder: a worker loads a run's
 * built-in source this way, so a user file of the same name cannot stand in for it.
 */
export function loadBuiltinWorkflow(id: string): LoadedWorkflow {
  const builtin = findBuiltinWorkflow(id);
  if (builtin === undefined) {
    throw new WorkflowLoadError("workflow_not_found", `built-in workflow "${id}" is not registered`);
  }
  return compileBuiltin(id, builtin);
}
