import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  type CompiledWorkflow,
  type LoadedWorkflow,
  loadBuiltinWorkflow,
  loadWorkflowFile,
  WorkflowLoadError,
} from "@piw/engine";
import {
  type RunRecord,
  type SafeError,
  type SourceIdentity,
  safeError,
  type WorkerResult,
} from "@piw/protocol";

/** What the host assigned this worker in its reply to `worker.hello`. */
export type WorkerAssignment = WorkerResult<"worker.hello">;

/** `debug` is the full text of a load failure, for the worker's local debug log only. */
type Loaded<T> = { ok: true; value: T } | { ok: false; error: SafeError; debug?: string };

export type RunWorkflowLoad = Loaded<CompiledWorkflow>;

function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function changed(what: string): { ok: false; error: SafeError } {
  return { ok: false, error: safeError("source_changed", `${what} changed since the run was prepared.`) };
}

async function loadFile(source: Extract<SourceIdentity, { kind: "file" }>): Promise<Loaded<LoadedWorkflow>> {
  let bytes: Buffer;
  try {
    bytes = await readFile(source.path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      return {
        ok: false,
        error: safeError("workflow_not_found", `Workflow file ${source.path} no longer exists.`),
      };
    }
    return {
      ok: false,
      error: safeError(
        "workflow_invalid",
        `Workflow file ${source.path} cannot be read (${code ?? "error"}).`,
      ),
    };
  }
  // Checked before evaluation: changed code must not run at all, not even its top level.
  if (sha256Hex(bytes) !== source.sha256) return changed(`Workflow file ${source.path}`);
  const loaded = await loadWorkflowFile(source.path);
  // The loader reads the file again; this catches an edit that landed in between.
  if (loaded.source.kind !== "file" || loaded.source.sha256 !== source.sha256) {
    return changed(`Workflow file ${source.path}`);
  }
  return { ok: true, value: loaded };
}

function loadBuiltin(source: Extract<SourceIdentity, { kind: "builtin" }>): Loaded<LoadedWorkflow> {
  const loaded = loadBuiltinWorkflow(source.id);
  if (loaded.source.kind !== "builtin" || loaded.source.revision !== source.revision) {
    return changed(`Built-in workflow ${source.id}`);
  }
  return { ok: true, value: loaded };
}

/**
 * Load the run's workflow from its saved source identity and prove it is the prepared definition:
 * same bytes (or built-in revision), same name, same compiled digest. Expected failures (missing,
 * invalid, changed) are results carrying the code the run fails with; anything else throws.
 */
export async function loadRunWorkflow(
  run: Pick<RunRecord, "source" | "workflowName" | "definitionDigest">,
): Promise<RunWorkflowLoad> {
  const { source } = run;
  let found: Loaded<LoadedWorkflow>;
  try {
    found = source.kind === "file" ? await loadFile(source) : loadBuiltin(source);
  } catch (error) {
    if (error instanceof WorkflowLoadError) {
      return { ok: false, error: error.toSafeError(), debug: error.message };
    }
    throw error;
  }
  if (!found.ok) return found;
  const { name, workflow } = found.value;
  if (name !== run.workflowName) {
    return changed(`The workflow's name (now "${name}", was "${run.workflowName}")`);
  }
  if (workflow.digest !== run.definitionDigest) {
    return changed(`The definition of workflow ${run.workflowName}`);
  }
  return { ok: true, value: workflow };
}
