import type { WorkflowDefinition, WorkflowInclude } from "../authoring/define-workflow.js";

/** An edge after validation: only declared, known targets remain. */
export type EdgeModel =
  | { kind: "goto"; target: string; label?: string }
  | {
      kind: "route";
      targets: readonly string[];
      route: (output: unknown) => unknown;
      labels: Readonly<Record<string, string>>;
    }
  | { kind: "decision"; cases: ReadonlyMap<string, string> };

/** A node's outcome routes after validation: every target is a node or an include of its workflow. */
export interface OutcomeRoutesModel {
  onFailure?: string;
  onTimeout?: string;
  onExitCode: ReadonlyMap<number, string>;
}

/** One workflow instance in the compiled tree: the root ('') or a mount (`docs`, `docs/workspace`). */
export interface ScopeModel {
  path: string;
  definition: WorkflowDefinition;
  /**
   * The mount that created this scope; absent for the root. A parallel branch has `fork` (its node's
   * path and the branch name): its exits lead to that node's join, not to `<mount>.<exit>` edges.
   */
  parent?: {
    scope: string;
    mount: string;
    include: WorkflowInclude;
    fork?: { path: string; branch: string };
  };
  /** Local node names, in definition order. */
  nodeNames: ReadonlySet<string>;
  /** Mount name → the child scope's path. */
  mounts: ReadonlyMap<string, string>;
  exits: ReadonlySet<string>;
  /** Undefined when startAt is missing or names nothing startable. */
  startAt?: string;
  /** By source: a node's local name, or `<mount>.<exit>`. */
  edges: ReadonlyMap<string, EdgeModel>;
  /** By a node's local name: where its failures go, when its edge says. */
  outcomeRoutes: ReadonlyMap<string, OutcomeRoutesModel>;
}

export function edgeTargets(edge: EdgeModel): readonly string[] {
  switch (edge.kind) {
    case "goto":
      return [edge.target];
    case "route":
      return edge.targets;
    case "decision":
      return [...new Set(edge.cases.values())];
    default:
      return edge satisfies never;
  }
}

/** The label a viewer shows on the edge from `edge` to `target`, if any. */
export function edgeLabel(edge: EdgeModel, target: string): string | undefined {
  switch (edge.kind) {
    case "goto":
      return edge.label;
    case "route":
      return edge.labels[target];
    case "decision": {
      const cases = [...edge.cases].filter(([, to]) => to === target).map(([choice]) => choice);
      return cases.join(" | ");
    }
    default:
      return edge satisfies never;
  }
}
