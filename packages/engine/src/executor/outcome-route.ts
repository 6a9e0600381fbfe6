import type { NodeVisitResult, SavedVisit } from "@piw/protocol";
import type {
  CompiledNode,
  CompiledWorkflow,
  FailureOutcome,
  NodeFailureInfo,
  ShellReport,
} from "../compiler/compiled-workflow.js";

type Failed = Extract<NodeVisitResult, { status: "failed" | "timed_out" }>;

/** The report of a shell node's non-ok exit, which runNode puts on the failed result. */
function shellReportOf(node: CompiledNode, result: Failed): ShellReport | undefined {
  if (node.kind !== "shell" || result.status !== "failed") return undefined;
  const output = result.output as Partial<ShellReport> | null | undefined;
  return typeof output?.exitCode === "number" ? (output as ShellReport) : undefined;
}

/**
 * Decides where a visit that did not succeed goes. A failure with an outcome route on its node's edge
 * gets the target as `next` (saved with the finish, in the same commit as the target's start), and a
 * shell report stays on it for the nodes after; without a route the result ends the run, as it always
 * did, and keeps nothing of the command's output. A cancelled run routes nothing.
 */
export function routeOutcome(
  workflow: CompiledWorkflow,
  node: CompiledNode,
  result: NodeVisitResult,
  signal: AbortSignal,
): NodeVisitResult {
  if (result.status === "succeeded") return result;
  const { next: _next, output: _output, ...unrouted } = result;
  if (signal.aborted || result.error.code === "cancelled") return unrouted;
  const report = shellReportOf(node, result);
  const outcome: FailureOutcome =
    result.status === "timed_out"
      ? { status: "timed_out" }
      : { status: "failed", ...(report === undefined ? {} : { exitCode: report.exitCode }) };
  const next = workflow.failureRoute(node.path, outcome);
  if (next === null) return unrouted;
  return { ...unrouted, next, ...(report === undefined ? {} : { output: result.output }) };
}

/** What `ctx.failures` shows of a routed failure: its code, its bounded message, a shell's report. */
export function failureInfoOf(
  result: Pick<SavedVisit, "error" | "output"> & { status: Failed["status"] },
): NodeFailureInfo {
  const info: NodeFailureInfo = {
    status: result.status,
    code: result.error?.code ?? "node_failed",
    message: result.error?.message ?? "",
  };
  const output = result.output as Partial<ShellReport> | null | undefined;
  if (typeof output?.exitCode === "number") info.shell = output as ShellReport;
  return info;
}
