import {
  type NodeVisitState,
  type RunSnapshot,
  type SafeError,
  safeError,
  type Transition,
} from "@piw/protocol";
import type { CompiledWorkflow } from "../compiler/compiled-workflow.js";
import type { AgentPlacement } from "./agent-session.js";
import { describeIssues } from "../compiler/schema-issues.js";
import { expectSaved, FenceLost, NodeFailure, RunParked, ValueTooLarge } from "./execution-signals.js";
import { nodeContextFor, runNode, tooLarge } from "./node-runner.js";
import { failureInfoOf, routeOutcome } from "./outcome-route.js";
import { visitTimeoutMs } from "./visit-deadline.js";
import { awaitRetryDue, retryIfAllowed } from "./retry-decision.js";
import type { RunPort } from "./run-port.js";
import { rebuildPosition } from "./run-position.js";
import { type DebugLog, toSafeError } from "./safe-failure.js";

/** How one run command ended, for the worker's exit report. */
export type ExecutionOutcome =
  | { kind: "completed"; output: unknown }
  | { kind: "waiting"; path: string; visit: number }
  | { kind: "failed"; error: SafeError }
  | { kind: "timed_out"; error: SafeError }
  | { kind: "parked"; reason: string }
  | { kind: "superseded"; detail: string }
  | { kind: "rejected"; error: SafeError };

export interface ExecuteOptions {
  workflow: CompiledWorkflow;
  port: RunPort;
  /** Aborted when the host cancels the run or the worker's channel closes. */
  signal?: AbortSignal;
  /**
   * Told when a shell node's command starts its process group and when the command exits, so the
   * worker's supervisor can kill what a dead worker left running.
   */
  onProcessGroup?: (pgid: number, alive: boolean) => void;
  /** Where the raw text of what workflow code threw goes (the worker's stderr); saved errors never carry it. */
  debug?: DebugLog;
  /** Where agent steps may run (the run's origin, directory, isolated sessions); default: its conversation. */
  agents?: AgentPlacement;
}

/**
 * A continuation's answer must fit the checkpoint it answers. The host checked what JSON Schema can
 * say; this is the last word (refinements, transforms). `answer_invalid` fails only this continuation:
 * the store keeps the checkpoint open, so a corrected answer can still be given.
 */
function checkAcceptedAnswer(
  workflow: CompiledWorkflow,
  accepted: RunSnapshot["accepted"],
): SafeError | null {
  if (!accepted) return null;
  const node = workflow.nodes.get(accepted.path);
  if (node?.kind !== "checkpoint") {
    return safeError("source_changed", `The answered checkpoint ${accepted.path} is not in the workflow.`);
  }
  const parsed = node.answer.safeParse(accepted.answer);
  if (parsed.success) return null;
  return safeError(
    "answer_invalid",
    `The answer to ${accepted.path} is invalid: ${describeIssues(parsed.error.issues, "(answer)")}. Answer the checkpoint again.`,
  );
}

async function fail(port: RunPort, error: SafeError, timedOut: boolean): Promise<ExecutionOutcome> {
  expectSaved(
    await port.finishRun(timedOut ? { outcome: "timed_out", error } : { outcome: "failed", error }),
  );
  return timedOut ? { kind: "timed_out", error } : { kind: "failed", error };
}

/**
 * Execute an accepted run command to its next stop. The four commands differ only in where the run
 * begins, and that is already saved: `start`/`restart` at the first node with nothing carried,
 * `continue` after the accepted checkpoint, `resume` at the saved position.
 */
export async function executeRun(options: ExecuteOptions): Promise<ExecutionOutcome> {
  const { workflow, port } = options;
  const signal = options.signal ?? new AbortController().signal;
  try {
    const snapshot = await port.loadSnapshot();
    const answerProblem = checkAcceptedAnswer(workflow, snapshot.accepted);
    if (answerProblem) return fail(port, answerProblem, false);
    const position = rebuildPosition(workflow, snapshot);
    let next = position.next;
    let steps = position.stepCount;
    /** The start of `next`, already saved together with the previous visit's finish (advance). */
    let opening: Transition<NodeVisitState> | undefined;
    for (;;) {
      switch (next.kind) {
        case "complete":
          expectSaved(await port.finishRun({ outcome: "completed", output: (next.output ?? null) as never }));
          return { kind: "completed", output: next.output };
        case "fail":
          return fail(port, next.error, next.status === "timed_out");
        case "wait": {
          const node = workflow.nodes.get(next.path);
          if (node?.kind !== "checkpoint") {
            return fail(
              port,
              safeError("source_changed", `Saved checkpoint ${next.path} is not in the workflow.`),
              false,
            );
          }
          let prompt: string;
          try {
            prompt = node.prompt(
              nodeContextFor(
                workflow,
                snapshot.input,
                position.outputsByPath,
                next.path,
                next.visit,
                signal,
                position.failuresByPath,
              ),
            );
          } catch (error) {
            // The prompt is author code: what it throws is saved like a node's throw, by its class only.
            const failure = toSafeError(error, {
              code: "node_failed",
              subject: `The prompt of checkpoint ${next.path}`,
            });
            options.debug?.(failure.debug);
            return fail(port, failure.error, false);
          }
          expectSaved(
            await port.finishRun({
              outcome: "waiting",
              checkpoint: {
                path: next.path,
                visit: next.visit,
                prompt,
                answeredBy: node.answeredBy,
                ...(node.answerSchema === null ? {} : { answerSchema: node.answerSchema }),
              },
              answerCheck: node.answerCheck,
            }),
          );
          return { kind: "waiting", path: next.path, visit: next.visit };
        }
        case "visit": {
          if (signal.aborted) return { kind: "superseded", detail: "The run was cancelled." };
          const node = workflow.nodes.get(next.path);
          if (!node) {
            return fail(
              port,
              safeError("source_changed", `Saved node ${next.path} is not in the workflow.`),
              false,
            );
          }
          const opened = expectSaved(
            opening ??
              (await port.startNodeVisit({
                path: next.path,
                visit: next.visit,
                nodeKind: node.kind,
                ...timeoutField(visitTimeoutMs(workflow, node, snapshot.input, position.outputsByPath)),
              })),
          );
          opening = undefined;
          if (opened.status === "running" && opened.attempt === 1) {
            steps += 1;
            if (steps > workflow.maxSteps) {
              const error = safeError(
                "max_steps_exceeded",
                `The run exceeded maxSteps (${workflow.maxSteps}).`,
              );
              expectSaved(
                await port.finishNodeVisit({
                  path: next.path,
                  visit: next.visit,
                  result: { status: "failed", error },
                }),
              );
              return fail(port, error, false);
            }
          }
          // A retry attempt the clock woke within its lead waits here for its due time.
          if (opened.status === "running" && node.kind !== "wait") {
            if ((await awaitRetryDue(port, opened, signal)) === "cancelled") {
              return { kind: "superseded", detail: "The run was cancelled." };
            }
          }
          const ran =
            opened.status === "finished"
              ? opened.result
              : await runNode({
                  workflow,
                  node,
                  port,
                  visit: next.visit,
                  attempt: opened.attempt,
                  deadline: opened.deadline ?? null,
                  dueAt: opened.dueAt ?? null,
                  runId: snapshot.runId,
                  runInput: snapshot.input,
                  outputsByPath: position.outputsByPath,
                  failuresByPath: position.failuresByPath,
                  signal,
                  ...(options.onProcessGroup ? { onProcessGroup: options.onProcessGroup } : {}),
                  ...(options.debug ? { debug: options.debug } : {}),
                  ...(options.agents ? { agents: options.agents } : {}),
                });
          // Retry first (the visit stays open for its next attempt); a final failure may then take a
          // route (outcome-route.ts). A saved result already holds its route.
          if (opened.status === "running") await retryIfAllowed({ node, port, opened, result: ran, signal });
          const result = opened.status === "finished" ? ran : routeOutcome(workflow, node, ran, signal);
          const finish = { path: next.path, visit: next.visit, result };
          position.visitCounts.set(next.path, next.visit);
          const nextPath = result.next ?? null;
          const following =
            nextPath !== null
              ? { path: nextPath, visit: (position.visitCounts.get(nextPath) ?? 0) + 1 }
              : null;
          const followingNode = following && workflow.nodes.get(following.path);
          if (opened.status === "running") {
            try {
              if (following && followingNode && port.advanceNodeVisit && !signal.aborted) {
                // One commit for the boundary: this visit's result and the next visit's start.
                const advanced = expectSaved(
                  await port.advanceNodeVisit({
                    finish,
                    start: {
                      ...following,
                      nodeKind: followingNode.kind,
                      ...timeoutField(
                        visitTimeoutMs(workflow, followingNode, snapshot.input, position.outputsByPath),
                      ),
                    },
                  }),
                );
                opening = advanced.started;
              } else {
                expectSaved(await port.finishNodeVisit(finish));
              }
            } catch (error) {
              if (!(error instanceof ValueTooLarge)) throw error;
              // Nothing of the result was saved: the visit fails instead, like any other failure.
              const failure = tooLarge(next.path, error);
              expectSaved(
                await port.finishNodeVisit({ ...finish, result: { status: "failed", error: failure } }),
              );
              return fail(port, failure, false);
            }
          }
          if (result.status !== "succeeded") {
            // Unrouted: the run ends here. Routed: the next node sees the failure in `ctx.failures`.
            if (following === null) return fail(port, result.error, result.status === "timed_out");
            position.failuresByPath.set(next.path, failureInfoOf(result));
          } else {
            position.outputsByPath.set(next.path, result.output);
            position.failuresByPath.delete(next.path);
          }
          if (following) {
            next = { kind: "visit", ...following };
          } else if (node.kind === "checkpoint") {
            next = { kind: "wait", path: next.path, visit: next.visit };
          } else {
            next = { kind: "complete", output: result.output };
          }
          break;
        }
        default:
          return next satisfies never;
      }
    }
  } catch (error) {
    if (error instanceof FenceLost) return { kind: "superseded", detail: error.message };
    if (error instanceof RunParked) return { kind: "parked", reason: error.reason.code };
    if (error instanceof NodeFailure) return fail(port, safeError(error.code, error.message), error.timedOut);
    // A checkpoint's prompt or the run's output that the port could not take.
    if (error instanceof ValueTooLarge)
      return fail(
        port,
        safeError("output_too_large", `The run's ending is too large to save: ${error.message}`),
        false,
      );
    throw error;
  }
}

/** The start's `timeoutMs`, only for kinds that have a deadline (the field is optional on the wire). */
function timeoutField(timeoutMs: number | null | undefined): { timeoutMs?: number | null } {
  return timeoutMs === undefined ? {} : { timeoutMs };
}
