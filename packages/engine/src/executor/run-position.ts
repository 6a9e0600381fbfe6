import type { RunSnapshot, SafeError, SavedVisit } from "@piw/protocol";
import type { CompiledWorkflow, NodeFailureInfo } from "../compiler/compiled-workflow.js";
import { failureInfoOf } from "./outcome-route.js";
import { crossScopes } from "./scope-entry.js";

/** Where a sequence of visits stands (the run's own, or one branch's), rebuilt from saved visits only. */
export type NextStep =
  | { kind: "visit"; path: string; visit: number }
  | { kind: "complete"; output: unknown }
  | { kind: "wait"; path: string; visit: number }
  | { kind: "fail"; path: string; visit: number; status: "failed" | "timed_out"; error: SafeError };

export interface RunPosition {
  outputsByPath: Map<string, unknown>;
  /** Routed failures whose node has not succeeded since, by full path: `ctx.failures`. */
  failuresByPath: Map<string, NodeFailureInfo>;
  visitCounts: Map<string, number>;
  stepCount: number;
  next: NextStep;
  /** The saved visits in the order they were opened: a parallel node rebuilds its branches from them. */
  saved: readonly SavedVisit[];
}

/** The entry of a run: the accepted checkpoint's successor for a continuation, else the start node. */
function entry(workflow: CompiledWorkflow, snapshot: RunSnapshot): NextStep {
  if (!snapshot.accepted) return { kind: "visit", path: workflow.startPath, visit: 1 };
  const target = workflow.next(snapshot.accepted.path, snapshot.accepted.answer);
  return target.kind === "node"
    ? { kind: "visit", path: target.path, visit: 1 }
    : { kind: "complete", output: snapshot.accepted.answer };
}

export function rebuildPosition(workflow: CompiledWorkflow, snapshot: RunSnapshot): RunPosition {
  const outputsByPath = new Map<string, unknown>(Object.entries(snapshot.carriedOutputs));
  if (snapshot.accepted) outputsByPath.set(snapshot.accepted.path, snapshot.accepted.answer);
  const failuresByPath = new Map<string, NodeFailureInfo>();
  const visitCounts = new Map<string, number>();
  for (const v of snapshot.visits) {
    visitCounts.set(v.path, Math.max(visitCounts.get(v.path) ?? 0, v.visit));
    if (v.status === "succeeded") {
      outputsByPath.set(v.path, v.output ?? null);
      failuresByPath.delete(v.path);
    } else if (v.status !== "running" && v.nextPath !== null) {
      failuresByPath.set(v.path, failureInfoOf({ ...v, status: v.status }));
    }
    if (v.nextPath !== null)
      crossScopes({ outputsByPath, failuresByPath }, v.path, v.nextPath, v.output ?? null);
  }
  // Without parallel nodes every visit is in the run's own sequence: the last one says where it stands.
  const last =
    workflow.manifest.forks === undefined
      ? snapshot.visits.at(-1)
      : lastInLane(workflow, snapshot.visits, "", -1);
  const next = last ? nextAfter(last, visitCounts) : entry(workflow, snapshot);
  return {
    outputsByPath,
    failuresByPath,
    visitCounts,
    stepCount: snapshot.stepCount,
    next,
    saved: snapshot.visits,
  };
}

/**
 * The lane of a saved visit's node. A node no longer in the workflow keeps the lane of the nearest
 * branch its path is under, so the branch (and its fork) see it and fail with `source_changed`.
 */
export function laneOf(workflow: CompiledWorkflow, path: string): string {
  const node = workflow.nodes.get(path);
  if (node) return node.lane;
  for (let end = path.lastIndexOf("/"); end > 0; end = path.lastIndexOf("/", end - 1)) {
    const scope = path.slice(0, end);
    const cut = Math.max(0, scope.lastIndexOf("/"));
    const fork = workflow.nodes.get(scope.slice(0, cut));
    if (fork?.kind === "parallel" && fork.branches.some((b) => b.scope === scope)) return scope;
    if (fork?.kind === "map" && /^\d+$/.test(scope.slice(cut + 1))) return scope;
  }
  return "";
}

/** The last saved visit of `lane` after position `after` in `saved` (-1: from the start). */
export function lastInLane(
  workflow: CompiledWorkflow,
  saved: readonly SavedVisit[],
  lane: string,
  after: number,
): SavedVisit | undefined {
  for (let i = saved.length - 1; i > after; i -= 1) {
    const visit = saved[i] as SavedVisit;
    if (laneOf(workflow, visit.path) === lane) return visit;
  }
  return undefined;
}

/** Where a sequence goes after its last saved visit. */
export function nextAfter(last: SavedVisit, visitCounts: ReadonlyMap<string, number>): NextStep {
  if (last.status === "running") {
    // A crash retry of the unfinished visit keeps its number (the execution-identity rule).
    return { kind: "visit", path: last.path, visit: last.visit };
  }
  if ((last.status === "failed" || last.status === "timed_out") && last.nextPath === null) {
    return {
      kind: "fail",
      path: last.path,
      visit: last.visit,
      status: last.status,
      error: last.error ?? { code: "node_failed", message: "The node failed." },
    };
  }
  if (last.nextPath !== null) {
    return { kind: "visit", path: last.nextPath, visit: (visitCounts.get(last.nextPath) ?? 0) + 1 };
  }
  // A checkpoint that answered itself (an approval gate's auto or skip) saved its answer as output.
  if (last.nodeKind === "checkpoint" && (last.output ?? null) === null) {
    return { kind: "wait", path: last.path, visit: last.visit };
  }
  return { kind: "complete", output: last.output ?? null };
}
