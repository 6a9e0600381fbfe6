import type { DecisionEdge, GotoEdge, RouteEdge } from "../authoring/edges.js";
import type { CompileProblem } from "./compile-error.js";
import { fieldName, unknownFields } from "./known-fields.js";
import { joinPath } from "./names.js";
import { takeOutcomeRoutes } from "./outcome-routes.js";
import type { EdgeModel, OutcomeRoutesModel } from "./scope-model.js";

/** What edge validation needs to know about one workflow scope. */
export interface EdgeScope {
  path: string;
  /** Local node name → its decision choices, or undefined for other kinds. */
  nodes: ReadonlyMap<string, readonly string[] | undefined>;
  /** Mount name → the child's exit names. */
  mountExits: ReadonlyMap<string, readonly string[]>;
  exits: ReadonlySet<string>;
  /** Local names of the shell nodes, which may route on exit codes. */
  shellNodes: ReadonlySet<string>;
}

type Fields = Record<string, unknown>;

const GOTO_FIELDS: readonly (keyof GotoEdge & string)[] = ["to", "label"];
const ROUTE_FIELDS: readonly (keyof RouteEdge & string)[] = ["to", "route", "labels"];
const DECISION_FIELDS: readonly (keyof DecisionEdge & string)[] = ["kind", "cases"];

function describeTargets(scope: EdgeScope): string {
  const names = [...scope.nodes.keys(), ...scope.mountExits.keys(), ...scope.exits];
  return names.map((n) => `"${n}"`).join(", ");
}

/**
 * Validates a scope's `edges` and returns the usable ones. Every node and every include exit needs exactly
 * one edge; every target must be a node, include or exit of the same workflow. A node's outcome routes
 * go to `outcomeRoutes`.
 */
export function collectEdges(
  scope: EdgeScope,
  rawEdges: unknown,
  problems: CompileProblem[],
  outcomeRoutes: Map<string, OutcomeRoutesModel> = new Map(),
): Map<string, EdgeModel> {
  const edges = new Map<string, EdgeModel>();
  if (typeof rawEdges !== "object" || rawEdges === null || Array.isArray(rawEdges)) {
    problems.push({ path: `${scope.path}:edges`, message: "edges must be an object keyed by source" });
    return edges;
  }
  for (const [source, raw] of Object.entries(rawEdges)) {
    const path = joinPath(scope.path, source);
    const report = (message: string) => problems.push({ path, message });
    if (!sourceIsKnown(scope, source, report)) continue;
    const choices = scope.nodes.get(source);
    // Only a node's edge routes outcomes; an include exit's edge keeps reporting them as unknown options.
    const split: { edge: unknown; routes?: OutcomeRoutesModel } = scope.nodes.has(source)
      ? takeOutcomeRoutes(scope, source, raw, report)
      : { edge: raw };
    if (split.routes !== undefined) outcomeRoutes.set(source, split.routes);
    const edge =
      choices === undefined ? plainEdge(split.edge, report) : decisionEdge(split.edge, choices, report);
    if (edge === undefined) continue;
    const valid = checkTargets(scope, edge, report);
    if (valid !== undefined) edges.set(source, valid);
  }
  for (const name of scope.nodes.keys()) {
    if (!(name in rawEdges)) {
      problems.push({ path: joinPath(scope.path, name), message: "node has no outgoing edge" });
    }
  }
  for (const [mount, exits] of scope.mountExits) {
    for (const exit of exits) {
      const source = `${mount}.${exit}`;
      if (!(source in rawEdges)) {
        problems.push({
          path: joinPath(scope.path, source),
          message: `exit "${exit}" of include "${mount}" has no edge`,
        });
      }
    }
  }
  return edges;
}

function sourceIsKnown(scope: EdgeScope, source: string, report: (m: string) => void): boolean {
  const dot = source.indexOf(".");
  if (dot === -1) {
    if (scope.nodes.has(source)) return true;
    if (scope.mountExits.has(source)) {
      report(`an include is left through its exits: use "${source}.<exit>" as the edge source`);
    } else {
      report(`edge from unknown node "${source}"`);
    }
    return false;
  }
  const mount = source.slice(0, dot);
  const exit = source.slice(dot + 1);
  const exits = scope.mountExits.get(mount);
  if (exits === undefined) {
    report(`edge from unknown include "${mount}"`);
    return false;
  }
  if (!exits.includes(exit)) {
    const known = exits.map((e) => `"${e}"`).join(", ") || "none";
    report(`unknown exit "${exit}" of include "${mount}" (its exits: ${known})`);
    return false;
  }
  return true;
}

function plainEdge(raw: unknown, report: (m: string) => void): EdgeModel | undefined {
  if (typeof raw !== "object" || raw === null) {
    report('an edge must be { to: "target" } or { to: [targets], route }');
    return undefined;
  }
  const f = raw as Fields;
  if (f.kind === "decision") {
    report("decisionEdge() routes decision nodes only; use { to } or { to: [...], route }");
    return undefined;
  }
  const known = Array.isArray(f.to) ? ROUTE_FIELDS : GOTO_FIELDS;
  for (const field of unknownFields(f, known)) {
    const hint = Array.isArray(f.to) ? "{ to: [targets], route, labels }" : '{ to: "target", label }';
    report(`an edge has no option ${fieldName(field)} (this edge is ${hint})`);
  }
  const labelOk = f.label === undefined || typeof f.label === "string";
  if (!labelOk) report("label must be a string");
  if (typeof f.to === "string") {
    if (f.route !== undefined) report("a route needs its declared targets as an array: { to: [...], route }");
    return labelOk ? { kind: "goto", target: f.to, label: f.label as string | undefined } : undefined;
  }
  if (Array.isArray(f.to)) {
    const targets = f.to;
    if (targets.length === 0 || !targets.every((t) => typeof t === "string")) {
      report("to must list at least one target name");
      return undefined;
    }
    if (typeof f.route !== "function") {
      report("an edge with several targets needs a route function that picks one");
      return undefined;
    }
    const labels = labelsOf(f.labels, report);
    if (labels === undefined) return undefined;
    const route = f.route as (output: unknown) => unknown;
    return { kind: "route", targets: [...new Set(targets as string[])], route, labels };
  }
  report('an edge must be { to: "target" } or { to: [targets], route }');
  return undefined;
}

function labelsOf(raw: unknown, report: (m: string) => void): Record<string, string> | undefined {
  if (raw === undefined) return {};
  if (typeof raw === "object" && raw !== null && Object.values(raw).every((v) => typeof v === "string")) {
    return { ...(raw as Record<string, string>) };
  }
  report("labels must map targets to strings");
  return undefined;
}

function decisionEdge(
  raw: unknown,
  choices: readonly string[],
  report: (m: string) => void,
): EdgeModel | undefined {
  const f = (typeof raw === "object" && raw !== null ? raw : {}) as Fields;
  const cases = f.cases;
  if (f.kind !== "decision" || typeof cases !== "object" || cases === null) {
    report("a decision node is routed with decisionEdge({ <choice>: <target>, ... })");
    return undefined;
  }
  for (const field of unknownFields(f, DECISION_FIELDS)) {
    report(
      `a decision edge has no option ${fieldName(field)}: build it with decisionEdge({ <choice>: <target> })`,
    );
  }
  const entries = Object.entries(cases);
  const byCase = new Map<string, string>();
  for (const [choice, target] of entries) {
    if (!choices.includes(choice)) {
      report(`unknown decision case "${choice}" (choices: ${choices.join(", ")})`);
    } else if (typeof target !== "string") {
      report(`decision case "${choice}" must name a target`);
    } else {
      byCase.set(choice, target);
    }
  }
  for (const choice of choices) {
    if (!(choice in cases)) report(`undecided decision case "${choice}"`);
  }
  return byCase.size === choices.length && byCase.size === entries.length
    ? { kind: "decision", cases: byCase }
    : undefined;
}

function isTarget(scope: EdgeScope, name: string): boolean {
  return scope.nodes.has(name) || scope.mountExits.has(name) || scope.exits.has(name);
}

function checkTargets(scope: EdgeScope, edge: EdgeModel, report: (m: string) => void): EdgeModel | undefined {
  const unknown = new Set<string>();
  const check = (target: string) => {
    if (!isTarget(scope, target)) unknown.add(target);
  };
  if (edge.kind === "goto") check(edge.target);
  if (edge.kind === "route") {
    edge.targets.forEach(check);
    for (const labelled of Object.keys(edge.labels)) {
      if (!edge.targets.includes(labelled))
        report(`label for "${labelled}", which is not a target of this edge`);
    }
  }
  if (edge.kind === "decision") edge.cases.forEach(check);
  for (const target of unknown) {
    report(`unknown edge target "${target}" (nodes, includes and exits here: ${describeTargets(scope)})`);
  }
  return unknown.size === 0 ? edge : undefined;
}
