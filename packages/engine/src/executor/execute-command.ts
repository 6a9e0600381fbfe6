import { type RunSnapshot, type SafeError, safeError } from "@piw/protocol";
import type { CompiledWorkflow } from "../compiler/compiled-workflow.js";
import { describeIssues } from "../compiler/schema-issues.js";
import type { AgentPlacement } from "./agent-session.js";
import { deadlineDefault, isDeadlineAnswer } from "./approval-gate.js";
import { expectSaved, FenceLost, NodeFailure, RunParked, ValueTooLarge } from "./execution-signals.js";
import { runFork } from "./fork-runner.js";
import { nodeContextFor } from "./node-runner.js";
import { OneAtATime } from "./one-at-a-time.js";
import type { RunPort } from "./run-port.js";
import { type RunPosition, rebuildPosition } from "./run-position.js";
import { type DebugLog, toSafeError } from "./safe-failure.js";
import { type Execution, type Lane, runSequence } from "./visit-sequence.js";

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
  /**
   * The environment the run's commands start from (a node's `env` adds to it): the worker passes the
   * one saved with the run; default this process's.
   */
  env?: Readonly<Record<string, string>>;
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
  if (parsed.success || isDeadlineAnswer(node, accepted.answer)) return null;
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
    const exec: Execution = {
      workflow,
      runId: snapshot.runId,
      runInput: snapshot.input,
      position,
      steps: { count: position.stepCount },
      conversation: new OneAtATime(),
      runFork: (lane, node, visit, attempt) => runFork(exec, lane, node, visit, attempt),
      ...(options.onProcessGroup ? { onProcessGroup: options.onProcessGroup } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.debug ? { debug: options.debug } : {}),
      ...(options.agents ? { agents: options.agents } : {}),
    };
    const lane: Lane = { name: "", port, signal, cancelledByJoin: () => null };
    const end = await runSequence(exec, lane, position.next);
    switch (end.kind) {
      case "complete":
        expectSaved(await port.finishRun({ outcome: "completed", output: (end.output ?? null) as never }));
        return { kind: "completed", output: end.output };
      case "failed":
        return fail(port, end.error, end.timedOut);
      case "cancelled":
        return { kind: "superseded", detail: "The run was cancelled." };
      case "checkpoint":
        return waitAtCheckpoint(options, snapshot, position, end, signal);
      default:
        return end satisfies never;
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

/** The run stops at a checkpoint: save it waiting, with the prompt its answerer sees. */
async function waitAtCheckpoint(
  options: ExecuteOptions,
  snapshot: RunSnapshot,
  position: RunPosition,
  at: { path: string; visit: number },
  signal: AbortSignal,
): Promise<ExecutionOutcome> {
  const { workflow, port } = options;
  const node = workflow.nodes.get(at.path);
  if (node?.kind !== "checkpoint") {
    return fail(
      port,
      safeError("source_changed", `Saved checkpoint ${at.path} is not in the workflow.`),
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
        at.path,
        at.visit,
        signal,
        position.failuresByPath,
      ),
    );
  } catch (error) {
    // The prompt is author code: what it throws is saved like a node's throw, by its class only.
    const failure = toSafeError(error, {
      code: "node_failed",
      subject: `The prompt of checkpoint ${at.path}`,
    });
    options.debug?.(failure.debug);
    return fail(port, failure.error, false);
  }
  const timeout = deadlineDefault(node, Date.now());
  expectSaved(
    await port.finishRun({
      outcome: "waiting",
      checkpoint: {
        path: at.path,
        visit: at.visit,
        prompt,
        answeredBy: node.answeredBy,
        ...(node.answerSchema === null ? {} : { answerSchema: node.answerSchema }),
      },
      answerCheck: node.answerCheck,
      ...(timeout === null ? {} : { timeout }),
    }),
  );
  return { kind: "waiting", path: at.path, visit: at.visit };
}
