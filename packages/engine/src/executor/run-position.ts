import type { RunSnapshot, SafeError } from "@piw/protocol";
import type { CompiledWorkflow, NodeFailureInfo } from "../compiler/compiled-workflow.js";
import { failureInfoOf } from "./outcome-route.js";

/** Where a run stands, rebuilt from saved visits only. */
type NextStep =
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
  }
  const last = snapshot.visits.at(-1);
  let next: NextStep;
  if (!last) {
    next = entry(workflow, snapshot);
  } else if (last.status === "running") {
    // A crash retry of the unfinished visit keeps its number (seed 000).
    next = { kind: "visit", path: last.path, visit: last.visit };
  } else if ((last.status === "failed" || last.status === "timed_out") && last.nextPath === null) {
    next = {
      kind: "fail",
      path: last.path,
      visit: last.visit,
      status: last.status,
      error: last.error ?? { code: "node_failed", message: "The node failed." },
    };
  } else if (last.nextPath !== null) {
    next = { kind: "visit", path: last.nextPath, visit: (visitCounts.get(last.nextPath) ?? 0) + 1 };
  } else if (last.nodeKind === "checkpoint") {
    next = { kind: "wait", path: last.path, visit: last.visit };
  } else {
    next = { kind: "complete", output: last.output ?? null };
  }
  return { outputsByPath, failuresByPath, visitCounts, stepCount: snapshot.stepCount, next };
}
