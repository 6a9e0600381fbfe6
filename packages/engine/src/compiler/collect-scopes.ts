import { nodePathSchema } from "@piw/protocol";
import {
  isWorkflowDefinition,
  type WorkflowDefinition,
  type WorkflowInclude,
} from "../authoring/define-workflow.js";
import type { WorkflowNode } from "../authoring/node-specs.js";
import type { CompileProblem } from "./compile-error.js";
import { compileNode, isZodSchema } from "./compile-node.js";
import { workflowTimeoutDefaults } from "./deadlines.js";
import type { CompiledNode } from "./compiled-workflow.js";
import { inputKeysOf } from "../launch/input-keys.js";
import { fieldName, unknownFields } from "./known-fields.js";
import { joinPath, localNameProblem, workflowNameProblem } from "./names.js";
import { branchScopesOf } from "./parallel-node.js";
import { mapBranchScopeOf } from "./map-node.js";
import { MAP_ITEM_SEGMENT } from "./map-paths.js";
import { collectEdges } from "./scope-edges.js";
import type { OutcomeRoutesModel, ScopeModel } from "./scope-model.js";

/** The workflow tree flattened: every scope and every node, keyed by full path. */
export interface CollectedTree {
  scopes: Map<string, ScopeModel>;
  nodes: Map<string, CompiledNode>;
  problems: CompileProblem[];
}

type Fields = Record<string, unknown>;

const MAX_PATH_LENGTH = nodePathSchema.maxLength ?? 500;

function recordOf(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

/** Walks the root definition and every include, assigning full paths and collecting every problem. */
export function collectScopes(root: WorkflowDefinition): CollectedTree {
  const tree: CollectedTree = { scopes: new Map(), nodes: new Map(), problems: [] };
  // Depth first with an explicit stack, children in declaration order: the same order as a
  // recursive walk, which the manifest and the digest depend on.
  const pending: PendingScope[] = [
    { definition: root, path: "", parent: undefined, ancestors: [], lane: "" },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    pending.push(...visitScope(tree, next).reverse());
  }
  return tree;
}

/** A scope still to visit, with the definitions it sits in (to refuse a workflow that includes itself). */
interface PendingScope {
  definition: WorkflowDefinition;
  path: string;
  parent: ScopeModel["parent"];
  ancestors: readonly WorkflowDefinition[];
  /** The innermost parallel branch the scope sits in, or '' outside any. */
  lane: string;
}

/** Collects one scope into the tree and returns its child scopes. */
function visitScope(tree: CollectedTree, visiting: PendingScope): PendingScope[] {
  const { definition, path, parent, ancestors, lane } = visiting;
  const problems = tree.problems;
  const at = (field: string) => `${path}:${field}`;
  const nameProblem = workflowNameProblem(definition.name);
  if (nameProblem !== undefined) problems.push({ path: at("name"), message: nameProblem });
  checkWorkflowFields(definition, path, problems);
  const timeoutDefaults = workflowTimeoutDefaults(definition.defaults, (field, message) =>
    problems.push({ path: at(field), message }),
  );

  const nodes = recordOf(definition.nodes) ?? {};
  const includes = recordOf(definition.includes) ?? {};
  if (recordOf(definition.nodes) === undefined)
    problems.push({ path: at("nodes"), message: "nodes must be an object" });
  if (recordOf(definition.includes) === undefined) {
    problems.push({ path: at("includes"), message: "includes must be an object" });
  }
  const exitList = Array.isArray(definition.exits) ? (definition.exits as unknown[]) : [];
  if (!Array.isArray(definition.exits) || exitList.length === 0) {
    problems.push({ path: at("exits"), message: "a workflow needs at least one exit" });
  }

  // One namespace per scope: an edge target names a node, an include or an exit.
  const seen = new Map<string, string>();
  const claim = (name: unknown, what: string): name is string => {
    if (typeof name !== "string") {
      problems.push({ path: at("exits"), message: `${what} names must be strings` });
      return false;
    }
    const full = joinPath(path, name);
    const invalid = localNameProblem(name, what);
    if (invalid !== undefined) problems.push({ path: full, message: invalid });
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      problems.push({ path: full, message: `duplicate name "${name}": already used by ${earlier}` });
      return false;
    }
    seen.set(name, `${what === "exit" ? "an" : "a"} ${what}`);
    // Valid names joined by "/" fit nodePathSchema but for its length.
    if (full.length > MAX_PATH_LENGTH && invalid === undefined) {
      problems.push({ path: full, message: "the full path is longer than 500 characters" });
    }
    // An invalid name stays in the model, so that its edges do not add "unknown node" noise.
    return true;
  };

  const nodeChoices = new Map<string, readonly string[] | undefined>();
  const nodeNames = new Set<string>();
  const shellNodes = new Set<string>();
  const branchScopes: PendingScope[] = [];
  for (const [name, spec] of Object.entries(nodes)) {
    if (!claim(name, "node")) continue;
    const place = { path: joinPath(path, name), name, scope: path, lane };
    const compiled = compileNode(spec as WorkflowNode, place, problems, timeoutDefaults);
    nodeNames.add(name);
    if (compiled !== undefined) tree.nodes.set(place.path, compiled);
    if (lane !== "" && compiled?.kind === "checkpoint") {
      const fork = tree.nodes.get(lane.slice(0, lane.lastIndexOf("/")))?.kind === "map" ? "map" : "parallel";
      problems.push({
        path: place.path,
        message: `a checkpoint cannot sit inside a ${fork} branch: a gate in a branch is not supported yet; put it before or after the ${fork} node`,
      });
    }
    if (compiled?.kind === "map" && place.path.length <= MAX_PATH_LENGTH) {
      branchScopes.push(...mapScope(spec as unknown as Fields, place, [...ancestors, definition], problems));
    }
    if (compiled?.kind === "parallel" && place.path.length <= MAX_PATH_LENGTH) {
      branchScopes.push(
        ...forkScopes(spec as unknown as Fields, place.path, path, [...ancestors, definition], problems),
      );
    }
    const kind = (spec as Fields | undefined)?.kind;
    const choices = (spec as Fields | undefined)?.choices;
    if (kind === "shell") shellNodes.add(name);
    nodeChoices.set(
      name,
      kind === "decision" ? (Array.isArray(choices) ? (choices as string[]) : []) : undefined,
    );
  }

  const children: [string, WorkflowInclude][] = [];
  const mountExits = new Map<string, readonly string[]>();
  for (const [name, include] of Object.entries(includes)) {
    if (!claim(name, "include")) continue;
    const child = (include as Fields | undefined)?.workflow;
    const full = joinPath(path, name);
    if ((include as Fields | undefined)?.kind !== "include" || !isWorkflowDefinition(child)) {
      problems.push({
        path: full,
        message: "an include must be built with includeWorkflow(child, { input })",
      });
      continue;
    }
    for (const field of unknownFields(include as object, INCLUDE_FIELDS)) {
      problems.push({
        path: full,
        message: `an include has no option ${fieldName(field)} (includeWorkflow takes: title, input)`,
      });
    }
    mountExits.set(name, Array.isArray(child.exits) ? child.exits.filter((e) => typeof e === "string") : []);
    if (child === definition || ancestors.includes(child)) {
      // Known exits keep its edges quiet; descending would never end.
      problems.push({ path: full, message: `workflow "${child.name}" includes itself` });
      continue;
    }
    // Its own name already reports the path as too long; every path below it would be too.
    if (full.length > MAX_PATH_LENGTH) continue;
    children.push([name, include as WorkflowInclude]);
  }

  const exits = new Set<string>();
  for (const exit of exitList) if (claim(exit, "exit")) exits.add(exit);

  const outcomeRoutes = new Map<string, OutcomeRoutesModel>();
  const edgeScope = { path, nodes: nodeChoices, mountExits, exits, shellNodes };
  const edges = collectEdges(edgeScope, definition.edges, problems, outcomeRoutes);
  const startAt = checkStartAt(definition.startAt, nodeChoices, mountExits, exits, at("startAt"), problems);
  const mounts = new Map(children.map(([name]) => [name, joinPath(path, name)]));
  const scope: ScopeModel = {
    path,
    definition,
    parent,
    nodeNames,
    mounts,
    exits,
    startAt,
    edges,
    outcomeRoutes,
  };
  tree.scopes.set(path, scope);

  const mounted = children.map(([name, include]) => {
    const childPath = joinPath(path, name);
    if (include.title !== undefined && typeof include.title !== "string") {
      problems.push({ path: childPath, message: "title must be a string" });
    }
    return {
      definition: include.workflow,
      path: childPath,
      parent: { scope: path, mount: name, include },
      ancestors: [...ancestors, definition],
      lane,
    };
  });
  return [...branchScopes, ...mounted];
}

/** The scopes of a parallel node's branches: each is `<fork>/<branch>` and is its own lane. */
function forkScopes(
  spec: Fields,
  forkPath: string,
  scope: string,
  ancestors: readonly WorkflowDefinition[],
  problems: CompileProblem[],
): PendingScope[] {
  return branchScopesOf(spec).flatMap((branch) => {
    const path = joinPath(forkPath, branch.name);
    if (ancestors.includes(branch.definition)) {
      problems.push({ path, message: `workflow "${branch.definition.name}" includes itself` });
      return [];
    }
    const fork = { path: forkPath, branch: branch.name };
    return [
      {
        definition: branch.definition,
        path,
        parent: { scope, mount: branch.name, include: branch.include, fork },
        ancestors,
        lane: path,
      },
    ];
  });
}

/** The template scope of a map node's branch, `<map>/each`: its own lane, run once per item. */
function mapScope(
  spec: Fields,
  place: { path: string; name: string; scope: string },
  ancestors: readonly WorkflowDefinition[],
  problems: CompileProblem[],
): PendingScope[] {
  const branch = mapBranchScopeOf(spec, place.name, () => undefined);
  if (branch === undefined) return [];
  const path = joinPath(place.path, MAP_ITEM_SEGMENT);
  if (ancestors.includes(branch.definition)) {
    problems.push({ path, message: `workflow "${branch.definition.name}" includes itself` });
    return [];
  }
  const fork = { path: place.path, branch: MAP_ITEM_SEGMENT };
  const parent = { scope: place.scope, mount: MAP_ITEM_SEGMENT, include: branch.include, fork };
  return [{ definition: branch.definition, path, parent, ancestors, lane: path }];
}

function checkStartAt(
  startAt: unknown,
  nodes: ReadonlyMap<string, unknown>,
  mounts: ReadonlyMap<string, unknown>,
  exits: ReadonlySet<string>,
  path: string,
  problems: CompileProblem[],
): string | undefined {
  if (typeof startAt !== "string" || startAt === "") {
    problems.push({ path, message: "startAt is missing: name the node or include the workflow starts at" });
    return undefined;
  }
  if (nodes.has(startAt) || mounts.has(startAt)) return startAt;
  const why = exits.has(startAt) ? "is an exit" : "is not a node or include of this workflow";
  problems.push({ path, message: `startAt "${startAt}" ${why}` });
  return undefined;
}

/** What defineWorkflow returns; `edges` and `nodes` are read by name, so any other field is a mistake. */
const WORKFLOW_FIELDS: readonly (keyof WorkflowDefinition & string)[] = [
  "kind",
  "name",
  "title",
  "summary",
  "input",
  "textInput",
  "startAt",
  "nodes",
  "includes",
  "exits",
  "edges",
  "presentationPrompt",
  "notifyModel",
  "maxSteps",
  "defaults",
];
const INCLUDE_FIELDS: readonly (keyof WorkflowInclude & string)[] = ["kind", "workflow", "title", "input"];

const NOTIFY_MODEL_FIELDS = ["onFailure", "onCancel"] as const;

function checkNotifyModel(value: unknown, path: string, problems: CompileProblem[]): void {
  if (value === undefined) return;
  const message = "notifyModel must be an object { onFailure?: boolean, onCancel?: boolean }";
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({ path, message });
    return;
  }
  const fields = value as Record<string, unknown>;
  const wrong = Object.keys(fields).filter(
    (key) =>
      !(NOTIFY_MODEL_FIELDS as readonly string[]).includes(key) ||
      (fields[key] !== undefined && typeof fields[key] !== "boolean"),
  );
  if (wrong.length > 0) problems.push({ path, message: `${message}; check ${wrong.join(", ")}` });
}

function checkWorkflowFields(definition: WorkflowDefinition, path: string, problems: CompileProblem[]): void {
  const at = (field: string) => `${path}:${field}`;
  for (const field of unknownFields(definition, WORKFLOW_FIELDS)) {
    problems.push({
      path: at(field),
      message: `a workflow has no option ${fieldName(field)} (it takes: ${WORKFLOW_FIELDS.slice(1).join(", ")})`,
    });
  }
  if (definition.title !== undefined && typeof definition.title !== "string") {
    problems.push({ path: at("title"), message: "title must be a string" });
  }
  if (definition.summary !== undefined && typeof definition.summary !== "string") {
    problems.push({ path: at("summary"), message: "summary must be a string" });
  }
  if (definition.input !== undefined && !isZodSchema(definition.input)) {
    problems.push({ path: at("input"), message: "input must be a zod schema" });
  }
  checkTextInput(definition, at("textInput"), problems);
  if (definition.presentationPrompt !== undefined && typeof definition.presentationPrompt !== "string") {
    problems.push({ path: at("presentationPrompt"), message: "presentationPrompt must be a string" });
  }
  checkNotifyModel(definition.notifyModel, at("notifyModel"), problems);
  const steps = definition.maxSteps;
  if (typeof steps !== "number" || !Number.isInteger(steps) || steps < 1 || steps > 1_000_000) {
    problems.push({ path: at("maxSteps"), message: "maxSteps must be an integer from 1 to 1000000" });
  }
}

/**
 * Free words become `{ [textInput]: words }`: the field must be a key of an object input schema,
 * or every start from words would be refused.
 */
function checkTextInput(definition: WorkflowDefinition, path: string, problems: CompileProblem[]): void {
  const field = definition.textInput;
  if (field === undefined) return;
  if (typeof field !== "string") {
    problems.push({ path, message: "textInput must be the name of an input field" });
    return;
  }
  const schema = definition.input;
  const shape = schema !== undefined && isZodSchema(schema) ? inputKeysOf(schema) : undefined;
  if (shape === undefined || !shape.keys.includes(field)) {
    problems.push({
      path,
      message: `textInput ${fieldName(field)} is not a field of the input (it needs an object input schema with that key)`,
    });
  }
}
