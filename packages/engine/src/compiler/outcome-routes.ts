import type { ExitCodeRoutes, OutcomeRoutes } from "../authoring/edges.js";
import type { FailureOutcome } from "./compiled-workflow.js";
import { resolveAllTargets } from "./graph-routing.js";
import type { OutcomeRoutesModel, ScopeModel } from "./scope-model.js";

/** What the check needs of the edge's workflow scope. */
export interface OutcomeScope {
  nodes: ReadonlyMap<string, unknown>;
  mountExits: ReadonlyMap<string, unknown>;
  exits: ReadonlySet<string>;
  /** Local names of the scope's shell nodes: only they take `onExitCode`. */
  shellNodes: ReadonlySet<string>;
}

type RouteField = keyof OutcomeRoutes | keyof ExitCodeRoutes;
const ROUTE_FIELDS: readonly RouteField[] = ["onFailure", "onTimeout", "onExitCode"];

// Exit codes a process can report (a signal death is not a code and never routes by one).
const MAX_EXIT_CODE = 255;

/**
 * Takes the outcome routes off a node's raw edge, checks them and returns the rest of the edge for the
 * edge checks. A target must be a node or an include of the same workflow: a failure never ends a run
 * at an exit without a node that saw it.
 */
export function takeOutcomeRoutes(
  scope: OutcomeScope,
  source: string,
  raw: unknown,
  report: (message: string) => void,
): { edge: unknown; routes?: OutcomeRoutesModel } {
  if (typeof raw !== "object" || raw === null || !ROUTE_FIELDS.some((f) => f in raw)) return { edge: raw };
  const { onFailure, onTimeout, onExitCode, ...edge } = raw as Record<RouteField, unknown>;
  const routes: { onFailure?: string; onTimeout?: string; onExitCode: Map<number, string> } = {
    onExitCode: new Map(),
  };
  let valid = true;
  const target = (value: unknown, what: string): string | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== "string") {
      report(`${what} must name a node or include`);
    } else if (scope.nodes.has(value) || scope.mountExits.has(value)) {
      return value;
    } else if (scope.exits.has(value)) {
      report(
        `${what} leads to exit "${value}": a failure is routed to a node or include, which may then end the run there`,
      );
    } else {
      const names = [...scope.nodes.keys(), ...scope.mountExits.keys()].map((n) => `"${n}"`).join(", ");
      report(`unknown ${what} target "${value}" (nodes and includes here: ${names})`);
    }
    valid = false;
    return undefined;
  };
  const failure = target(onFailure, "onFailure");
  if (failure !== undefined) routes.onFailure = failure;
  const timeout = target(onTimeout, "onTimeout");
  if (timeout !== undefined) routes.onTimeout = timeout;
  if (onExitCode !== undefined) {
    if (!scope.shellNodes.has(source)) {
      report("onExitCode routes shell nodes only");
      valid = false;
    } else if (typeof onExitCode !== "object" || onExitCode === null || Array.isArray(onExitCode)) {
      report('onExitCode must map exit codes to targets: { 1: "fix" }');
      valid = false;
    } else {
      for (const [key, value] of Object.entries(onExitCode)) {
        const code = Number(key);
        if (!/^\d+$/.test(key) || code > MAX_EXIT_CODE) {
          report(`onExitCode has ${JSON.stringify(key.slice(0, 20))}, not an exit code from 0 to 255`);
          valid = false;
          continue;
        }
        const to = target(value, `onExitCode ${code}`);
        if (to !== undefined) routes.onExitCode.set(code, to);
      }
    }
  }
  return valid ? { edge, routes } : { edge };
}

/** The local target an outcome takes: its exit code's route, else `onTimeout` for a timeout, else `onFailure`. */
function outcomeTarget(routes: OutcomeRoutesModel, outcome: FailureOutcome): string | undefined {
  if (outcome.status === "timed_out") return routes.onTimeout ?? routes.onFailure;
  const byCode = outcome.exitCode === undefined ? undefined : routes.onExitCode.get(outcome.exitCode);
  return byCode ?? routes.onFailure;
}

/** Every local target of the routes with the label a viewer shows on its edge, in a stable order. */
function outcomeEdges(routes: OutcomeRoutesModel): { target: string; label: string }[] {
  const edges: { target: string; label: string }[] = [];
  if (routes.onFailure !== undefined) edges.push({ target: routes.onFailure, label: "on failure" });
  if (routes.onTimeout !== undefined) edges.push({ target: routes.onTimeout, label: "on timeout" });
  for (const [code, target] of [...routes.onExitCode].sort(([a], [b]) => a - b)) {
    edges.push({ target, label: `exit ${code}` });
  }
  return edges;
}

/** The full path of the node where `outcome` of node `name` in `scopePath` goes, or null when unrouted. */
export function failureStep(
  scopes: ReadonlyMap<string, ScopeModel>,
  scopePath: string,
  name: string,
  outcome: FailureOutcome,
): string | null {
  const routes = scopes.get(scopePath)?.outcomeRoutes.get(name);
  const target = routes && outcomeTarget(routes, outcome);
  if (target === undefined) return null;
  // A node or an include (its start node): the compiler allowed nothing else.
  const [resolved] = resolveAllTargets(scopes, scopePath, target);
  return resolved?.to.kind === "node" ? resolved.to.path : null;
}

/** Each outcome edge of every node, by the node's full path, for the manifest and the graph checks. */
export function outcomeEdgesOf(scope: ScopeModel, name: string): { target: string; label: string }[] {
  const routes = scope.outcomeRoutes.get(name);
  return routes === undefined ? [] : outcomeEdges(routes);
}
