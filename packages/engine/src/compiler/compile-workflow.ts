import { canonicalJson } from "@piw/protocol";
import type { ZodType } from "zod";
import {
  DEFAULT_TEXT_INPUT,
  isWorkflowDefinition,
  type WorkflowDefinition,
} from "../authoring/define-workflow.js";
import type { WorkflowNode } from "../authoring/node-specs.js";
import { buildManifest, resolvedEdges } from "./build-manifest.js";
import { collectScopes } from "./collect-scopes.js";
import { CompileError } from "./compile-error.js";
import { shellCommandOf } from "./compile-node.js";
import type { CompiledNode, CompiledWorkflow, NextStep } from "./compiled-workflow.js";
import { schemaJson, sha256Hex } from "./definition-digest.js";
import { checkGraph } from "./graph-checks.js";
import type { GraphManifest } from "./graph-manifest.js";
import { nextStep, startPathOf } from "./graph-routing.js";
import { joinPath } from "./names.js";
import { concreteOf, type MapInstance, templateOf } from "@piw/protocol";
import { InstancedNodes } from "./map-paths.js";
import { mapItemOf } from "./map-items.js";
import { failureStep } from "./outcome-routes.js";
import { RoutingError, ScopeInputError } from "./runtime-errors.js";
import { describeIssues } from "./schema-issues.js";
import type { ScopeModel } from "./scope-model.js";

/**
 * Validates a workflow definition with all its includes, assigns every node its full path, and returns
 * the runtime graph. Throws a CompileError that lists every problem found.
 */
export function compileWorkflow(definition: WorkflowDefinition): CompiledWorkflow {
  if (!isWorkflowDefinition(definition)) {
    throw new CompileError("(unknown)", [
      { path: ":", message: "not a workflow definition: build it with defineWorkflow({...})" },
    ]);
  }
  const { scopes, nodes, problems } = collectScopes(definition);
  const startPath = startPathOf(scopes, "");
  placeBranchStarts(nodes, scopes);
  const resolved = resolvedEdges(scopes);
  const successors = new Map(
    [...resolved].map(([from, targets]) => [from, targets.map((t) => t.to)] as const),
  );
  // A parallel or map node goes on into each of its branches too (those edges are not in the manifest).
  for (const node of nodes.values()) {
    if (node.kind !== "parallel" && node.kind !== "map") continue;
    const branches = node.kind === "map" ? [node.branch] : node.branches;
    const starts: NextStep[] = branches.map((b) => ({ kind: "node", path: b.startPath }));
    successors.set(node.path, [...(successors.get(node.path) ?? []), ...starts]);
  }
  const paths = [...scopes.values()].flatMap((s) => [...s.nodeNames].map((name) => joinPath(s.path, name)));
  checkGraph({ paths, successors, startPath }, problems);
  if (problems.length > 0 || startPath === undefined) {
    throw new CompileError(String(definition.name), problems);
  }

  const manifest = buildManifest(definition, scopes, nodes, startPath, resolved);
  const digest = definitionDigest(manifest, scopes);
  const maps = new Set([...nodes.values()].flatMap((n) => (n.kind === "map" ? [n.path] : [])));
  /** A scope or node path of a visit (`review/3`), resolved to its template (`review/each`). */
  const resolve = (path: string): MapInstance => templateOf(path, maps) ?? { template: ":", indices: [] };
  const scopeOutputs = (scope: string, outputsByPath: ReadonlyMap<string, unknown>) => {
    const outputs: Record<string, unknown> = {};
    const model = scopes.get(resolve(scope).template);
    // A mount's result (the output its exit was taken with) sits under the mount's own path.
    for (const name of [...(model?.nodeNames ?? []), ...(model?.mounts.keys() ?? [])]) {
      const path = joinPath(scope, name);
      if (outputsByPath.has(path)) outputs[name] = outputsByPath.get(path);
    }
    return outputs;
  };
  const scopeInput = (
    scope: string,
    runInput: unknown,
    outputsByPath: ReadonlyMap<string, unknown>,
  ): unknown => {
    const { template, indices } = resolve(scope);
    const model = scopes.get(template);
    if (model === undefined) throw new ScopeInputError(scope, `no workflow is mounted at "${scope}"`);
    if (model.parent === undefined) return parseInput(model.definition.input, runInput, scope);
    const { include, fork } = model.parent;
    const parentScope = concreteOf(model.parent.scope, indices, maps);
    const projection = include.input;
    // A map's branch sees its item, from the list its map's open visit saved, as its scope's input.
    const input =
      fork !== undefined && maps.has(fork.path)
        ? mapItemOf(outputsByPath, scope)
        : typeof projection === "function"
          ? scopeInput(parentScope, runInput, outputsByPath)
          : undefined;
    const value =
      typeof projection === "function"
        ? projection({ input, outputs: scopeOutputs(parentScope, outputsByPath) })
        : projection;
    return parseInput(model.definition.input, value, scope);
  };

  const compiled: CompiledWorkflow = {
    name: definition.name,
    digest,
    manifest,
    startPath,
    maxSteps: definition.maxSteps,
    textInput: definition.textInput ?? DEFAULT_TEXT_INPUT,
    notifyModel: {
      onFailure: definition.notifyModel?.onFailure ?? true,
      onCancel: definition.notifyModel?.onCancel ?? true,
    },
    nodes: new InstancedNodes(nodes, maps),
    next(path: string, output: unknown): NextStep {
      const { template, indices } = resolve(path);
      const node = nodes.get(template);
      if (node === undefined) throw new RoutingError("unknown_path", path, `no node has the path "${path}"`);
      const step = nextStep(scopes, node.scope, node.name, output);
      return step.kind === "exit" ? step : { ...step, path: concreteOf(step.path, indices, maps) };
    },
    failureRoute(path, outcome) {
      const { template, indices } = resolve(path);
      const node = nodes.get(template);
      const to = node === undefined ? null : failureStep(scopes, node.scope, node.name, outcome);
      return to === null ? null : concreteOf(to, indices, maps);
    },
    scopeInput,
    scopeOutputs,
  };
  if (definition.title !== undefined) compiled.title = definition.title;
  if (definition.summary !== undefined) compiled.summary = definition.summary;
  if (definition.input !== undefined) compiled.inputSchema = definition.input;
  if (definition.presentationPrompt !== undefined)
    compiled.presentationPrompt = definition.presentationPrompt;
  if (definition.budget !== undefined) compiled.budget = definition.budget;
  return compiled;
}

/** Fills in each parallel and map node's branch start paths, now that every branch scope is collected. */
function placeBranchStarts(nodes: Map<string, CompiledNode>, scopes: ReadonlyMap<string, ScopeModel>): void {
  for (const node of nodes.values()) {
    if (node.kind === "map") {
      const startPath = startPathOf(scopes, node.branch.scope) ?? node.branch.scope;
      nodes.set(node.path, { ...node, branch: { ...node.branch, startPath } });
    }
    if (node.kind !== "parallel") continue;
    const branches = node.branches.map((b) => ({ ...b, startPath: startPathOf(scopes, b.scope) ?? b.scope }));
    nodes.set(node.path, { ...node, branches });
  }
}

function parseInput(schema: ZodType | undefined, value: unknown, scope: string): unknown {
  if (schema === undefined) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Issue paths and schema words only: the input itself may be private, and zod's messages may quote it.
  const issues = describeIssues(result.error.issues, "(input)");
  const where = scope === "" ? "the workflow input" : `the input of "${scope}"`;
  throw new ScopeInputError(scope, `${where} does not match its schema: ${issues}`);
}

/** A deadline setting as the digest sees it: a computed one is "(fn)". */
function timeoutSetting(value: unknown): unknown {
  return typeof value === "function" ? "(fn)" : value;
}

/** The settings of a node that change what it does, beyond the graph: schemas, static texts, limits. */
function nodeSettings(spec: WorkflowNode): unknown {
  const text = (value: unknown) =>
    typeof value === "string" ? value : typeof value === "function" ? "(fn)" : undefined;
  switch (spec.kind) {
    case "agent":
      return {
        prompt: text(spec.prompt),
        output: schemaJson(spec.output),
        validate: spec.validate !== undefined,
        timeoutMs: timeoutSetting(spec.timeoutMs),
        statusDetail: text(spec.statusDetail),
        retry: spec.retry,
      };
    case "checkpoint":
      return { prompt: text(spec.prompt), answer: schemaJson(spec.answer) };
    case "shell":
      return {
        exec: typeof spec.exec === "function" ? "(fn)" : shellCommandOf(spec.exec),
        parse: spec.parse !== undefined,
        okExitCodes: spec.okExitCodes,
        cwd: spec.cwd,
        env: spec.env,
        timeoutMs: timeoutSetting(spec.timeoutMs),
        retry: spec.retry,
      };
    case "notify":
      return { message: text(spec.message) };
    case "decision":
      return { choices: spec.choices };
    case "action":
      return { timeoutMs: timeoutSetting(spec.timeoutMs), retry: spec.retry };
    case "wait":
      return { ms: spec.ms, until: text(spec.until) };
    case "compute":
      return {};
    case "parallel":
      return { join: spec.join, concurrency: spec.concurrency };
    case "map":
      return { join: spec.join, concurrency: spec.concurrency, maxItems: spec.maxItems };
    default:
      return spec satisfies never;
  }
}

/** sha256 over the manifest, every schema and every node's settings, in canonical JSON. */
function definitionDigest(manifest: GraphManifest, scopes: ReadonlyMap<string, ScopeModel>): string {
  const settings: Record<string, unknown> = {};
  const inputs: Record<string, unknown> = {};
  for (const scope of scopes.values()) {
    inputs[scope.path] = schemaJson(scope.definition.input) ?? null;
    for (const name of scope.nodeNames) {
      const spec = scope.definition.nodes[name];
      if (spec !== undefined) settings[joinPath(scope.path, name)] = nodeSettings(spec);
    }
  }
  const root = scopes.get("")?.definition;
  const presentationPrompt = root?.presentationPrompt;
  // Absent when the workflow leaves it at its defaults, so older digests stay as they were.
  const notifyModel = root?.notifyModel;
  const budget = root?.budget;
  return sha256Hex(canonicalJson({ manifest, inputs, settings, presentationPrompt, notifyModel, budget }));
}
