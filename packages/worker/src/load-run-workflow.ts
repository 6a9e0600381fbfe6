import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  type LoadedWorkflow,
  loadBuiltinWorkflow,
  loadWorkflowFile,
  WorkflowLoadError,
  type WorkflowLoad,
} from "@piw/engine";
import { type SafeError, type SourceIdentity, safeError, type WorkerResult } from "@piw/protocol";

/** What the host assigned this worker in its reply to `worker.hello`. */
export type WorkerAssignment = WorkerResult<"worker.hello">;

type Loaded<T> = { ok: true; value: T } | { ok: false; error: SafeError };

function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function changed(what: string): { ok: false; error: SafeError } {
  return { ok: false, error: safeError("source_changed", `${what} changed since the run was prepared.`) };
}

async function loadFile(
  source: Extract<SourceIdentity, { kind: "file" }>,
  acceptChanges: boolean,
): Promise<Loaded<LoadedWorkflow>> {
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
  // Checked before evaluation: changed code must not run at all, not even its top level, unless a
  // person accepted the changes (then the engine checks the changed definition against the run).
  if (!acceptChanges && sha256Hex(bytes) !== source.sha256) return changed(`Workflow file ${source.path}`);
  const loaded = await loadWorkflowFile(source.path);
  if (acceptChanges) return { ok: true, value: loaded };
  // The loader reads the file again; this catches an edit that landed in between.
  if (loaded.source.kind !== "file" || loaded.source.sha256 !== source.sha256) {
    return changed(`Workflow file ${source.path}`);
  }
  return { ok: true, value: loaded };
}

function loadBuiltin(
  source: Extract<SourceIdentity, { kind: "builtin" }>,
  acceptChanges: boolean,
): Loaded<LoadedWorkflow> {
  const loaded = loadBuiltinWorkflow(source.id);
  if (loaded.source.kind !== "builtin" || (!acceptChanges && loaded.source.revision !== source.revision)) {
    return changed(`Built-in workflow ${source.id}`);
  }
  return { ok: true, value: loaded };
}

/**
 * Load the run's workflow from its saved source identity: the same bytes (checked before they are
 * evaluated) or the same built-in revision. Expected failures (missing, invalid, changed) are results
 * carrying the code the run fails with; anything else throws. That it compiles to the prepared
 * definition is `acceptRunCommand`'s check.
 */
export async function loadRunWorkflow(
  source: SourceIdentity,
  how: { acceptChanges: boolean } = { acceptChanges: false },
): Promise<WorkflowLoad> {
  let found: Loaded<LoadedWorkflow>;
  try {
    found =
      source.kind === "file"
        ? await loadFile(source, how.acceptChanges)
        : loadBuiltin(source, how.acceptChanges);
  } catch (error) {
    if (error instanceof WorkflowLoadError) {
      return { ok: false, error: error.toSafeError(), debug: error.message };
    }
    throw error;
  }
  return found.ok ? { ok: true, value: found.value.workflow, source: found.value.source } : found;
}
