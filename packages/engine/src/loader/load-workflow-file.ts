import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, resolve } from "node:path";
import type { SourceIdentity } from "@piw/protocol";
import type { Jiti } from "jiti";
import * as zod from "zod";
import { isWorkflowDefinition, type WorkflowDefinition } from "../authoring/define-workflow.js";
import * as authoring from "../authoring/index.js";
import { CompileError } from "../compiler/compile-error.js";
import { compileWorkflow } from "../compiler/compile-workflow.js";
import type { CompiledWorkflow } from "../compiler/compiled-workflow.js";
import { sha256Hex } from "../compiler/definition-digest.js";
import { workflowNameProblem } from "../compiler/names.js";
import { toSafeError } from "../executor/safe-failure.js";
import { importWorkflowModule, isUnsupportedSyntax, type ModuleGraph } from "./native-workflow-import.js";
import { summaryOf, WorkflowLoadError } from "./workflow-load-error.js";

export const WORKFLOW_FILE_SUFFIX = ".workflow.ts";

/** The public package name workflow files import the authoring API from. */
export const AUTHORING_MODULE = "piw";

/** A workflow ready to run: where it came from, what the author declared, and the compiled graph. */
export interface LoadedWorkflow {
  name: string;
  source: SourceIdentity;
  definition: WorkflowDefinition;
  workflow: CompiledWorkflow;
  /** The files evaluated to load it, when every one was hashed (not for built-ins or jiti's loads). */
  modules?: ModuleGraph | undefined;
}

let loader: Promise<Jiti> | undefined;

/**
 * One jiti instance for the files Node's type stripping cannot take. `piw` and `zod` are this engine's own
 * module instances (so a file anywhere on disk needs no node_modules, and its schemas are the engine's
 * zod); the `zod` alias serves subpaths such as `zod/v4` from the same package. No module cache: a
 * changed file reloads. Imported on first use: most processes never need it.
 */
function workflowLoader(): Promise<Jiti> {
  loader ??= import("jiti").then(({ createJiti }) =>
    createJiti(import.meta.url, {
      virtualModules: { [AUTHORING_MODULE]: authoring, zod },
      alias: { zod: dirname(createRequire(import.meta.url).resolve("zod/package.json")) },
      moduleCache: false,
      fsCache: false,
    }),
  );
  return loader;
}

/**
 * Evaluates the file's bytes: natively first; through jiti when Node rejects the syntax (TypeScript that
 * is not erasable, such as an enum). A parse error comes before any of the file's code ran, so the
 * second attempt does not repeat top-level side effects of a file that parsed.
 */
async function evaluateWorkflowModule(
  file: string,
  bytes: Buffer,
): Promise<{ namespace: { default?: unknown } | undefined; graph: ModuleGraph | undefined }> {
  try {
    return await importWorkflowModule(file, bytes);
  } catch (error) {
    if (!isUnsupportedSyntax(error)) throw error;
  }
  // jiti does not say which files it evaluated: its loads have no module graph.
  const namespace = (await (
    await workflowLoader()
  ).evalModule(bytes.toString("utf8"), {
    id: file,
    filename: file,
    async: true,
  })) as { default?: unknown } | undefined;
  return { namespace, graph: undefined };
}

/** "it threw a SyntaxError.": what may be saved about a throw while loading (its text may quote env). */
function classOf(error: unknown): string {
  return toSafeError(error, { code: "workflow_invalid", subject: "it" }).error.message;
}

/** `review.workflow.ts` → `review`; undefined for a file without the suffix. */
function workflowFileStem(path: string): string | undefined {
  const file = basename(path);
  return file.endsWith(WORKFLOW_FILE_SUFFIX) ? file.slice(0, -WORKFLOW_FILE_SUFFIX.length) : undefined;
}

/** Compiles a definition, turning compile problems into a workflow_invalid load error. */
export function compileForLoad(definition: WorkflowDefinition, where: string): CompiledWorkflow {
  try {
    return compileWorkflow(definition);
  } catch (error) {
    if (error instanceof CompileError) {
      throw new WorkflowLoadError("workflow_invalid", `${where}: ${error.message}`, error.problems);
    }
    throw new WorkflowLoadError(
      "workflow_invalid",
      `${where} failed to compile: ${summaryOf(error)}`,
      [],
      `${where} failed to compile: ${classOf(error)}`,
    );
  }
}

/**
 * Loads, checks and compiles one `<name>.workflow.ts` file. The file's bytes are read once: the same
 * bytes are hashed for the source identity and evaluated.
 */
export async function loadWorkflowFile(
  path: string,
  options: { cwd?: string } = {},
): Promise<LoadedWorkflow> {
  const file = resolve(options.cwd ?? process.cwd(), path);
  const name = workflowFileStem(file);
  if (name === undefined) {
    throw new WorkflowLoadError(
      "workflow_invalid",
      `${file}: workflow files are named <name>${WORKFLOW_FILE_SUFFIX}`,
    );
  }
  const nameProblem = workflowNameProblem(name);
  if (nameProblem !== undefined) throw new WorkflowLoadError("workflow_invalid", `${file}: ${nameProblem}`);

  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new WorkflowLoadError("workflow_not_found", `workflow file ${file} does not exist`);
    }
    throw new WorkflowLoadError("workflow_invalid", `cannot read ${file}: ${summaryOf(error)}`);
  }

  let exported: unknown;
  let modules: ModuleGraph | undefined;
  try {
    const evaluated = await evaluateWorkflowModule(file, bytes);
    exported = evaluated.namespace?.default;
    modules = evaluated.graph;
  } catch (error) {
    throw new WorkflowLoadError(
      "workflow_invalid",
      `${file} failed to load: ${summaryOf(error)}`,
      [],
      `${file} failed to load: ${classOf(error)}`,
    );
  }
  if (!isWorkflowDefinition(exported)) {
    throw new WorkflowLoadError("workflow_invalid", `${file} must \`export default defineWorkflow({...})\``);
  }
  if (exported.name !== name) {
    throw new WorkflowLoadError(
      "workflow_invalid",
      `${file} defines the workflow "${String(exported.name)}"; its name must match the file name "${name}"`,
    );
  }
  const workflow = compileForLoad(exported, file);
  return {
    name,
    source: { kind: "file", path: file, sha256: sha256Hex(bytes) },
    definition: exported,
    workflow,
    modules,
  };
}
