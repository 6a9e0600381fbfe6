import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { type LoadFnOutput, type ModuleFormat, type ResolveFnOutput, registerHooks } from "node:module";
import { extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as authoring from "../authoring/index.js";
import { nodeImport } from "./node-import.js";
import { strippedModuleSource } from "./stripped-source.js";

/**
 * Workflow files through Node's own module loader and its built-in TypeScript type stripping, which is
 * several times faster to start than jiti's Babel transform. Sync module hooks serve `piw` as this
 * engine's authoring module, resolve `zod` (and its subpaths) from the engine, and give every file of one
 * load a URL of its own, so a changed file (or a changed file it imports) is evaluated afresh.
 *
 * Only erasable TypeScript works here (no enums, namespaces or parameter properties); the caller falls
 * back to jiti for anything this rejects as syntax.
 */

/** The query parameter that marks a module as part of one workflow load, and which load. */
const LOAD_PARAM = "piw-load";
/** One tag per engine instance: two engine copies in one process each handle only their own loads. */
const INSTANCE = randomBytes(4).toString("hex");
const AUTHORING_URL = `piw:authoring?${LOAD_PARAM}=${INSTANCE}`;
const AUTHORING_GLOBAL = Symbol.for(`piw.authoring.${INSTANCE}`);

/** Module formats for the TypeScript extensions; other files go to Node's default loader. */
const TYPESCRIPT_FORMATS: Record<string, ModuleFormat> = {
  ".ts": "module-typescript",
  ".mts": "module-typescript",
  ".cts": "commonjs-typescript",
};

let hooksRegistered = false;
let loads = 0;
/** Source bytes to evaluate for a load's root URL: the bytes the caller already read and hashed. */
const rootSources = new Map<string, Buffer>();
/** `piw-workflow:<tag>` → the root file's tagged URL, while its load runs. */
const rootUrls = new Map<string, string>();

/**
 * The files one load evaluated, with the sha256 of the exact bytes, for the launch cache. Incomplete when
 * a module came from somewhere these hooks cannot hash (a package in node_modules, a CommonJS file).
 */
export interface ModuleGraph {
  files: { path: string; sha256: string }[];
  complete: boolean;
}
/** Load tag → what that load evaluated so far. */
const graphs = new Map<string, { files: Map<string, string>; complete: boolean }>();

function recordModule(tag: string, url: string, source: LoadFnOutput["source"]): void {
  const graph = graphs.get(tag);
  if (graph === undefined) return;
  if (source === undefined || source === null) {
    graph.complete = false;
    return;
  }
  const bytes = typeof source === "string" ? source : Buffer.from(source as Uint8Array);
  // The load's query does not name a file: the path is the file's own.
  graph.files.set(fileURLToPath(url), sha256Of(bytes));
}

const sha256Of = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

function loadTagOf(url: string | undefined): string | undefined {
  if (url === undefined || !(url.startsWith("file:") || url.startsWith("piw:"))) return undefined;
  const tag = new URL(url).searchParams.get(LOAD_PARAM);
  return tag?.startsWith(`${INSTANCE}.`) || tag === INSTANCE ? tag : undefined;
}

function authoringSource(): string {
  const names = Object.keys(authoring).filter((name) => name !== "default");
  return `const api = globalThis[Symbol.for(${JSON.stringify(AUTHORING_GLOBAL.description)})];\nexport const { ${names.join(", ")} } = api;\n`;
}

function registerWorkflowHooks(): void {
  if (hooksRegistered) return;
  hooksRegistered = true;
  (globalThis as Record<symbol, unknown>)[AUTHORING_GLOBAL] = authoring;
  const engineUrl = import.meta.url;
  registerHooks({
    resolve(specifier, context, nextResolve): ResolveFnOutput {
      const root = rootUrls.get(specifier);
      if (root !== undefined) return { url: root, shortCircuit: true };
      const tag = loadTagOf(context.parentURL);
      if (tag === undefined) return nextResolve(specifier, context);
      if (specifier === "piw") return { url: AUTHORING_URL, format: "module", shortCircuit: true };
      // The file's schemas must be the engine's zod instance, wherever the file lives.
      if (specifier === "zod" || specifier.startsWith("zod/")) {
        return nextResolve(specifier, { ...context, parentURL: engineUrl });
      }
      const resolved = nextResolve(specifier, context);
      if (!resolved.url.startsWith("file:") || resolved.url.includes("/node_modules/")) {
        // A package's files are not hashed: such a load is never served from the launch cache.
        if (!resolved.url.startsWith("node:")) markIncomplete(tag);
        return resolved;
      }
      const url = new URL(resolved.url);
      url.searchParams.set(LOAD_PARAM, tag);
      return { ...resolved, url: url.href };
    },
    load(url, context, nextLoad): LoadFnOutput {
      if (url === AUTHORING_URL) return { format: "module", source: authoringSource(), shortCircuit: true };
      if (loadTagOf(url) === undefined || !url.startsWith("file:")) return nextLoad(url, context);
      const fileUrl = new URL(url);
      const format = TYPESCRIPT_FORMATS[extname(fileUrl.pathname)];
      const tag = loadTagOf(url) ?? "";
      if (format === undefined) {
        const loaded = nextLoad(url, context);
        recordModule(tag, url, loaded.source);
        return loaded;
      }
      const source = rootSources.get(url) ?? readFileSync(fileUrl);
      recordModule(tag, url, source);
      // ES modules get their types stripped here, through a cache that spares most runs the stripper.
      if (format === "module-typescript") {
        return { format: "module", source: strippedModuleSource(source), shortCircuit: true };
      }
      return { format, source, shortCircuit: true };
    },
  });
}

function markIncomplete(tag: string): void {
  const graph = graphs.get(tag);
  if (graph !== undefined) graph.complete = false;
}

/**
 * Evaluates `bytes` as the module at `file` (imports resolve from there); returns its namespace and the
 * files that load evaluated.
 */
export async function importWorkflowModule(
  file: string,
  bytes: Buffer,
): Promise<{ namespace: { default?: unknown }; graph: ModuleGraph }> {
  registerWorkflowHooks();
  loads += 1;
  const tag = `${INSTANCE}.${loads}`;
  const url = new URL(pathToFileURL(file));
  url.searchParams.set(LOAD_PARAM, tag);
  rootSources.set(url.href, bytes);
  const specifier = `piw-workflow:${tag}`;
  rootUrls.set(specifier, url.href);
  const graph = { files: new Map<string, string>(), complete: true };
  graphs.set(tag, graph);
  try {
    const namespace = (await nodeImport(specifier)) as { default?: unknown };
    const files = [...graph.files].map(([path, sha256]) => ({ path, sha256 }));
    return { namespace, graph: { files, complete: graph.complete } };
  } finally {
    rootSources.delete(url.href);
    rootUrls.delete(specifier);
    graphs.delete(tag);
  }
}

/** Errors that mean "Node could not parse this as erasable TypeScript", where jiti may still succeed. */
export function isUnsupportedSyntax(error: unknown): boolean {
  if (error instanceof SyntaxError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX" || code === "ERR_INVALID_TYPESCRIPT_SYNTAX";
}
