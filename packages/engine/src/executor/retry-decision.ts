import type { ClockReason, NodeVisitResult, NodeVisitState } from "@piw/protocol";
import type { CompiledNode } from "../compiler/compiled-workflow.js";
import { retries, retryDelayMs } from "../compiler/retry-policy.js";
import { type DueHold, holdUntilDue } from "./due-hold.js";
import { expectSaved, RunParked } from "./execution-signals.js";
import type { RunPort } from "./run-port.js";

export interface RetryCheck {
  node: CompiledNode;
  port: RunPort;
  /** The open visit the failed attempt belongs to. */
  opened: Extract<NodeVisitState, { status: "running" }>;
  result: NodeVisitResult;
  signal: AbortSignal;
  now?: () => number;
  random?: () => number;
}

/**
 * The retry decision for an attempt that did not succeed, taken before the visit is closed: when the
 * node's policy allows another attempt, park the run until the pause is over (the visit stays open,
 * and the host's clock wakes the run for the next attempt of the same visit) and stop by throwing
 * RunParked. Returns (saving nothing) when the failure is final.
 */
export async function retryIfAllowed(check: RetryCheck): Promise<void> {
  const { node, result, opened } = check;
  if (result.status === "succeeded" || check.signal.aborted) return;
  if (node.kind !== "agent" && node.kind !== "shell" && node.kind !== "action") return;
  const policy = node.retry;
  if (policy === null) return;
  const failed = (opened.failedAttempts ?? 0) + 1;
  if (failed >= policy.attempts || !retries(policy, result)) return;
  const at = (check.now ?? Date.now)() + retryDelayMs(policy, failed, check.random ?? Math.random);
  const reason: ClockReason = {
    code: "retry_waiting",
    message: `attempt ${failed + 1} of ${policy.attempts} at ${new Date(at).toISOString()} (attempt ${failed} failed: ${result.error.code})`,
    path: opened.path,
    visit: opened.visit,
    attempt: failed + 1,
    attempts: policy.attempts,
    at,
    lastError: result.error.code,
  };
  expectSaved(await check.port.parkRun(reason));
  throw new RunParked(reason);
}

/**
 * Before a retry attempt the clock woke within the wake lead: sleep until the attempt is due. A pause
 * asked for meanwhile parks the run (the visit keeps its due time, and a resume runs the attempt); a
 * cancel returns `cancelled` at once. An attempt the run reached earlier than the lead runs at once,
 * except in a parallel or map branch (`inBranch`): there the run may have woken for another branch,
 * so the attempt parks again for its saved due time, as a wait that is not due does.
 */
export async function awaitRetryDue(
  port: RunPort,
  opened: Extract<NodeVisitState, { status: "running" }>,
  signal: AbortSignal,
  node: CompiledNode,
  inBranch: boolean,
): Promise<Exclude<DueHold, "paused" | "ahead">> {
  const failed = opened.failedAttempts ?? 0;
  if (opened.dueAt === undefined || failed === 0) return "due";
  const held = await holdUntilDue({ dueAt: opened.dueAt, port, signal, now: Date.now });
  if (held === "due" || held === "cancelled") return held;
  const attempts = "retry" in node && node.retry !== null ? node.retry.attempts : failed + 1;
  if (held === "ahead") {
    if (!inBranch) return "due";
    const at = opened.dueAt;
    const reason: ClockReason = {
      code: "retry_waiting",
      message: `attempt ${failed + 1} of ${attempts} at ${new Date(at).toISOString()} (not due yet)`,
      path: opened.path,
      visit: opened.visit,
      attempt: failed + 1,
      attempts: Math.max(attempts, failed + 1),
      at,
      lastError: "not_due",
    };
    expectSaved(await port.parkRun(reason));
    throw new RunParked(reason);
  }
  const reason = {
    code: "paused" as const,
    message: `Paused before attempt ${failed + 1} of ${opened.path}.`,
  };
  expectSaved(await port.parkRun(reason));
  throw new RunParked(reason);
}
