import type { NextStep } from "./compiled-workflow.js";
import { joinPath } from "./names.js";
import { RoutingError } from "./runtime-errors.js";
import { type EdgeModel, edgeTargets, type ScopeModel } from "./scope-model.js";

/** A local edge target resolved to where the run really goes, with the include exits it passes. */
export interface ResolvedTarget {
  to: NextStep;
  /** Include exit edges passed on the way, as full paths (`docs/design.ready`). */
  via: string[];
}

type Scopes = ReadonlyMap<string, ScopeModel>;

/** The full path of the node a scope starts at, following includes that start at another include. */
export function startPathOf(scopes: Scopes, scopePath: string): string | undefined {
  // A loop, not recursion: includes can nest as deep as the path limit allows.
  for (let path = scopePath; ; ) {
    const scope = scopes.get(path);
    if (scope?.startAt === undefined) return undefined;
    const mount = scope.mounts.get(scope.startAt);
    if (mount === undefined) return joinPath(path, scope.startAt);
    path = mount;
  }
}

/**
 * Resolves `target` (a local name in `scopePath`) to every place it can lead, statically: a route edge on
 * an include exit contributes all its declared targets.
 */
export function resolveAllTargets(scopes: Scopes, scopePath: string, target: string): ResolvedTarget[] {
  const resolved: ResolvedTarget[] = [];
  // Depth first with an explicit stack, in the order the targets are declared.
  const pending = [{ scopePath, target, via: [] as string[] }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const step = resolveLocal(scopes, item.scopePath, item.target);
    if (step === undefined) continue;
    if (step.kind !== "exitScope") {
      resolved.push({ to: step.to, via: item.via });
      continue;
    }
    const via = [...item.via, step.source];
    const targets = edgeTargets(step.edge);
    for (let i = targets.length - 1; i >= 0; i -= 1) {
      pending.push({ scopePath: step.parentPath, target: targets[i] as string, via });
    }
  }
  return resolved;
}

/** Where `output` of the node at `path` leads at run time. */
export function nextStep(scopes: Scopes, scopePath: string, nodeName: string, output: unknown): NextStep {
  const path = joinPath(scopePath, nodeName);
  const edge = scopes.get(scopePath)?.edges.get(nodeName);
  if (edge === undefined) throw new RoutingError("unknown_path", path, `no edge leaves "${path}"`);
  return follow(scopes, scopePath, pickTarget(edge, output, path), output, path);
}

function follow(scopes: Scopes, scopePath: string, target: string, output: unknown, from: string): NextStep {
  let at = { scopePath, target, from };
  for (;;) {
    const step = resolveLocal(scopes, at.scopePath, at.target);
    if (step === undefined) {
      throw new RoutingError("unknown_path", at.from, `target "${at.target}" of "${at.from}" leads nowhere`);
    }
    if (step.kind !== "exitScope") return step.to;
    at = {
      scopePath: step.parentPath,
      target: pickTarget(step.edge, output, step.source),
      from: step.source,
    };
  }
}

type LocalStep =
  | { kind: "resolved"; to: NextStep }
  | { kind: "exitScope"; parentPath: string; source: string; edge: EdgeModel };

function resolveLocal(scopes: Scopes, scopePath: string, target: string): LocalStep | undefined {
  const scope = scopes.get(scopePath);
  if (scope === undefined) return undefined;
  if (scope.nodeNames.has(target)) {
    return { kind: "resolved", to: { kind: "node", path: joinPath(scopePath, target) } };
  }
  const mount = scope.mounts.get(target);
  if (mount !== undefined) {
    const start = startPathOf(scopes, mount);
    return start === undefined ? undefined : { kind: "resolved", to: { kind: "node", path: start } };
  }
  if (!scope.exits.has(target)) return undefined;
  if (scope.parent === undefined) return { kind: "resolved", to: { kind: "exit", exit: target } };
  // A branch that reaches one of its exits is done: the run goes on at its parallel node's join.
  if (scope.parent.fork !== undefined)
    return { kind: "resolved", to: { kind: "join", path: scope.parent.fork.path } };
  // Leaving a child through one of its exits continues at the parent's `<mount>.<exit>` edge.
  const local = `${scope.parent.mount}.${target}`;
  const edge = scopes.get(scope.parent.scope)?.edges.get(local);
  if (edge === undefined) return undefined;
  return {
    kind: "exitScope",
    parentPath: scope.parent.scope,
    source: joinPath(scope.parent.scope, local),
    edge,
  };
}

function pickTarget(edge: EdgeModel, output: unknown, source: string): string {
  switch (edge.kind) {
    case "goto":
      return edge.target;
    case "route": {
      const picked = edge.route(output);
      if (typeof picked === "string" && edge.targets.includes(picked)) return picked;
      throw new RoutingError(
        "undeclared_target",
        source,
        `the route of "${source}" returned ${describe(picked)}, not one of its declared targets (${edge.targets.join(", ")})`,
      );
    }
    case "decision": {
      const target = typeof output === "string" ? edge.cases.get(output) : undefined;
      if (target !== undefined) return target;
      throw new RoutingError(
        "invalid_choice",
        source,
        `decision "${source}" chose ${describe(output)}, not one of ${[...edge.cases.keys()].join(", ")}`,
      );
    }
    default:
      return edge satisfies never;
  }
}

/** The kind of value only: a route's or decision's result is data, and this message is saved. */
function describe(value: unknown): string {
  if (typeof value === "string") return "a string";
  return value === null ? "null" : typeof value;
}
