import { type NodeVisitState, type SafeError, safeError, type Transition } from "@piw/protocol";
import type { CompiledNode, CompiledWorkflow } from "../compiler/compiled-workflow.js";
import { type AgentPlacement, agentSessionFor } from "./agent-session.js";
import { expectSaved, NodeFailure, ValueTooLarge } from "./execution-signals.js";
import { runNode, tooLarge } from "./node-runner.js";
import type { OneAtATime } from "./one-at-a-time.js";
import { type BurstBreak, BurstStopped, isPureNode, PureBurst, predictedStart } from "./pure-burst.js";
import { failureInfoOf, routeOutcome } from "./outcome-route.js";
import { awaitRetryDue, retryIfAllowed } from "./retry-decision.js";
import type { RunPort } from "./run-port.js";
import type { NextStep, RunPosition } from "./run-position.js";
import type { DebugLog } from "./safe-failure.js";
import { crossScopes, sameScope } from "./scope-entry.js";
import { visitTimeoutMs } from "./visit-deadline.js";

/** What every sequence of one run command shares: the run, its rebuilt position and its step count. */
export interface Execution {
  workflow: CompiledWorkflow;
  runId: string;
  runInput: unknown;
  position: RunPosition;
  /** Visits opened so far (first attempts), against `maxSteps`: every sequence counts here. */
  steps: { count: number };
  onProcessGroup?: (pgid: number, alive: boolean) => void;
  env?: Readonly<Record<string, string>>;
  debug?: DebugLog;
  agents?: AgentPlacement;
  /** The run's conversation holds one step at a time: branches take turns at it. */
  conversation: OneAtATime;
  /** Runs a parallel or map node's visit (fork-runner.ts); passed in so the two files need not import each other. */
  runFork(
    lane: Lane,
    node: Extract<CompiledNode, { kind: "parallel" | "map" }>,
    visit: number,
    attempt: number,
  ): Promise<RunResult>;
}

type RunResult = Awaited<ReturnType<typeof runNode>>;

/** One sequence of visits: the run's own (`name` '') or a branch's, with its own port and signal. */
export interface Lane {
  name: string;
  /** A branch's port holds a clock park until its fork has nothing else to run (fork-runner.ts). */
  port: RunPort;
  /** Aborts on the run's cancel, and for a branch also when its fork stops it. */
  signal: AbortSignal;
  /** The error a branch's unfinished visit is saved with when its join cancelled it; else null. */
  cancelledByJoin(): SafeError | null;
}

/** How a sequence ended; its last visit is saved. `cancelled`: its signal aborted. */
export type SequenceEnd =
  | { kind: "complete"; output: unknown }
  | { kind: "checkpoint"; path: string; visit: number }
  | { kind: "failed"; error: SafeError; timedOut: boolean }
  | { kind: "cancelled" };

/** The start's `timeoutMs`, only for kinds that have a deadline (the field is optional on the wire). */
function timeoutField(timeoutMs: number | null | undefined): { timeoutMs?: number | null } {
  return timeoutMs === undefined ? {} : { timeoutMs };
}

function startOf(exec: Execution, node: CompiledNode, path: string, visit: number) {
  const { workflow, runInput, position } = exec;
  return {
    path,
    visit,
    nodeKind: node.kind,
    ...timeoutField(visitTimeoutMs(workflow, node, runInput, position.outputsByPath)),
  };
}

/** Whether an agent step of a branch needs the run's conversation, which takes one step at a time. */
function needsConversation(exec: Execution, node: CompiledNode): boolean {
  if (node.kind !== "agent" || node.lane === "") return false;
  return exec.agents === undefined || agentSessionFor(node, exec.agents.origin) === "conversation";
}

async function runOpened(
  exec: Execution,
  lane: Lane,
  node: CompiledNode,
  visit: number,
  opened: Extract<NodeVisitState, { status: "running" }>,
): Promise<RunResult> {
  if (node.kind === "parallel" || node.kind === "map")
    return closeOnRunFailure(lane.port, node.path, visit, exec.runFork(lane, node, visit, opened.attempt));
  const work = () =>
    runNode({
      workflow: exec.workflow,
      node,
      port: lane.port,
      visit,
      attempt: opened.attempt,
      deadline: opened.deadline ?? null,
      dueAt: opened.dueAt ?? null,
      runId: exec.runId,
      runInput: exec.runInput,
      outputsByPath: exec.position.outputsByPath,
      failuresByPath: exec.position.failuresByPath,
      signal: lane.signal,
      ...(exec.onProcessGroup ? { onProcessGroup: exec.onProcessGroup } : {}),
      ...(exec.env ? { env: exec.env } : {}),
      ...(exec.debug ? { debug: exec.debug } : {}),
      ...(exec.agents ? { agents: exec.agents } : {}),
    });
  return needsConversation(exec, node) ? exec.conversation.run(work) : work();
}

/**
 * A failure that ends the whole run inside a fork's branch (maxSteps, a node no longer in the
 * workflow) closes the fork's own visit with the same error before the run fails: it ended too.
 */
async function closeOnRunFailure(
  port: RunPort,
  path: string,
  visit: number,
  running: Promise<RunResult>,
): Promise<RunResult> {
  try {
    return await running;
  } catch (thrown) {
    if (!(thrown instanceof NodeFailure)) throw thrown;
    const error = safeError(thrown.code, thrown.message);
    const result = thrown.timedOut
      ? { status: "timed_out" as const, error }
      : { status: "failed" as const, error };
    expectSaved(await port.finishNodeVisit({ path, visit, result }));
    throw thrown;
  }
}

async function saveCancelled(port: RunPort, path: string, visit: number, error: SafeError): Promise<void> {
  expectSaved(await port.finishNodeVisit({ path, visit, result: { status: "failed", error } }));
}

/** Where a sequence goes on after a broken burst: from the real reply of the write that broke it. */
type Resumed =
  | { kind: "ended"; end: SequenceEnd }
  | { kind: "next"; next: NextStep; opening: Transition<NodeVisitState> };

/**
 * The first write of a burst whose reply was not predicted, handled as it would have been without
 * running ahead (the position is already rewound to just after that write was sent).
 */
async function resumeAfter(exec: Execution, port: RunPort, broke: BurstBreak): Promise<Resumed> {
  const { finish, start } = broke.request;
  if (broke.outcome.kind === "error") {
    const { error } = broke.outcome;
    if (!(error instanceof ValueTooLarge)) throw error;
    const failure = tooLarge(finish.path, error);
    expectSaved(await port.finishNodeVisit({ ...finish, result: { status: "failed", error: failure } }));
    return { kind: "ended", end: { kind: "failed", error: failure, timedOut: false } };
  }
  const opening = expectSaved(broke.outcome.reply).started;
  // Only a success runs ahead: its output is what the next nodes see.
  const output = finish.result.status === "succeeded" ? finish.result.output : null;
  exec.position.outputsByPath.set(finish.path, output);
  exec.position.failuresByPath.delete(finish.path);
  crossScopes(exec.position, finish.path, start.path, output);
  return { kind: "next", next: { kind: "visit", path: start.path, visit: start.visit }, opening };
}

/** The burst's break behind `error`, thrown by speculative work; rethrows `error` when the burst held. */
async function breakBehind(burst: PureBurst, error: unknown): Promise<BurstBreak> {
  if (error instanceof BurstStopped) return error.broke;
  try {
    await burst.settle();
  } catch (stopped) {
    if (stopped instanceof BurstStopped) return stopped.broke;
    throw stopped;
  }
  throw error;
}

/**
 * Runs one sequence of node visits from `start` until it ends: at an exit (or its branch's join), a
 * checkpoint, an unrouted failure, or its signal. Stops (throws) for a lost fence, a park, and the
 * failures that end the whole run (`NodeFailure`: maxSteps, a node no longer in the workflow).
 * Pure steps run ahead of their writes' replies (pure-burst.ts); every end waits for them.
 */
export async function runSequence(exec: Execution, outer: Lane, start: NextStep): Promise<SequenceEnd> {
  const burst = new PureBurst(outer.port);
  const lane: Lane = {
    name: outer.name,
    port: burst.port,
    signal: outer.signal,
    cancelledByJoin: () => outer.cancelledByJoin(),
  };
  const ended = async (end: SequenceEnd): Promise<SequenceEnd> => {
    await burst.settle();
    return end;
  };
  let next = start;
  /** The start of `next`, already saved together with the previous visit's finish (advance), or predicted. */
  let opening: Transition<NodeVisitState> | undefined;
  for (;;) {
    try {
      const step = await visitStep(exec, lane, burst, next, opening);
      if (step.kind === "ended") return await ended(step.end);
      next = step.next;
      opening = step.opening;
    } catch (error) {
      const resumed = await resumeAfter(exec, lane.port, await breakBehind(burst, error));
      if (resumed.kind === "ended") return resumed.end;
      next = resumed.next;
      opening = resumed.opening;
    }
  }
}

type Step = Resumed | { kind: "next"; next: NextStep; opening: Transition<NodeVisitState> | undefined };

/** One turn of a sequence: the end it reached, or the step after `next` with its opening. */
async function visitStep(
  exec: Execution,
  lane: Lane,
  burst: PureBurst,
  next: NextStep,
  opening: Transition<NodeVisitState> | undefined,
): Promise<Step> {
  const { workflow, position } = exec;
  const { port, signal } = lane;
  const end = (sequenceEnd: SequenceEnd): Step => ({ kind: "ended", end: sequenceEnd });
  switch (next.kind) {
    case "complete":
      return end({ kind: "complete", output: next.output });
    case "fail":
      return end({ kind: "failed", error: next.error, timedOut: next.status === "timed_out" });
    case "wait":
      return end({ kind: "checkpoint", path: next.path, visit: next.visit });
    case "visit": {
      if (signal.aborted) {
        const cancelled = lane.cancelledByJoin();
        if (opening && cancelled) await saveCancelled(port, next.path, next.visit, cancelled);
        return end({ kind: "cancelled" });
      }
      const node = workflow.nodes.get(next.path);
      if (!node) throw new NodeFailure("source_changed", `Saved node ${next.path} is not in the workflow.`);
      const opened = expectSaved(
        opening ?? (await port.startNodeVisit(startOf(exec, node, next.path, next.visit))),
      );
      if (opened.status === "running" && opened.attempt === 1) {
        exec.steps.count += 1;
        burst.changed(() => {
          exec.steps.count -= 1;
        });
        if (exec.steps.count > workflow.maxSteps) {
          const error = safeError("max_steps_exceeded", `The run exceeded maxSteps (${workflow.maxSteps}).`);
          const result = { status: "failed" as const, error };
          expectSaved(await port.finishNodeVisit({ path: next.path, visit: next.visit, result }));
          throw new NodeFailure(error.code, error.message);
        }
      }
      // A retry attempt the clock woke within its lead waits here for its due time.
      if (opened.status === "running" && node.kind !== "wait") {
        if ((await awaitRetryDue(port, opened, signal, node, lane.name !== "")) === "cancelled") {
          const cancelled = lane.cancelledByJoin();
          // A branch its join cancelled while its attempt slept: the visit is saved as cancelled.
          if (cancelled) await saveCancelled(port, next.path, next.visit, cancelled);
          return end({ kind: "cancelled" });
        }
      }
      const ran =
        opened.status === "finished" ? opened.result : await runOpened(exec, lane, node, next.visit, opened);
      // A failure is decided on saved ground: no retry or route is taken ahead of an unsaved write.
      if (ran.status !== "succeeded") await burst.settle();
      // Retry first (the visit stays open for its next attempt); a final failure may then take a
      // route (outcome-route.ts). A saved result already holds its route.
      if (opened.status === "running") {
        try {
          await retryIfAllowed({ node, port, opened, result: ran, signal });
        } catch (error) {
          // A branch's retry pause waits for its fork; a join decided meanwhile cancels the branch.
          if (lane.cancelledByJoin() === null) throw error;
        }
      }
      let result = opened.status === "finished" ? ran : routeOutcome(workflow, node, ran, signal);
      const cancelled =
        opened.status === "running" && result.status !== "succeeded" && lane.cancelledByJoin();
      // A branch its join cancelled keeps its unfinished visit as cancelled, never routed or retried.
      if (cancelled) result = { status: "failed", error: cancelled };
      const finish = { path: next.path, visit: next.visit, result };
      burst.set(position.visitCounts, next.path, next.visit);
      const nextPath = result.next ?? null;
      const following =
        nextPath !== null ? { path: nextPath, visit: (position.visitCounts.get(nextPath) ?? 0) + 1 } : null;
      const followingNode = following && workflow.nodes.get(following.path);
      let started: Transition<NodeVisitState> | undefined;
      if (opened.status === "running") {
        try {
          if (following && followingNode && !signal.aborted) {
            // One commit for the boundary: this visit's result and the next visit's start.
            const request = { finish, start: startOf(exec, followingNode, following.path, following.visit) };
            if (
              result.status === "succeeded" &&
              isPureNode(node) &&
              isPureNode(followingNode) &&
              sameScope(next.path, following.path)
            ) {
              // Pure into pure: the next node runs now, from the start the store will save.
              await burst.send(request);
              started = predictedStart(following.path, following.visit);
            } else {
              started = expectSaved(await port.advanceNodeVisit(request)).started;
            }
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
          return end({ kind: "failed", error: failure, timedOut: false });
        }
      }
      if (result.status !== "succeeded") {
        // Unrouted: the sequence ends here. Routed: the next node sees the failure in `ctx.failures`.
        if (following === null) {
          if (cancelled) return end({ kind: "cancelled" });
          return end({ kind: "failed", error: result.error, timedOut: result.status === "timed_out" });
        }
        burst.set(position.failuresByPath, next.path, failureInfoOf(result));
      } else {
        burst.set(position.outputsByPath, next.path, result.output);
        burst.delete(position.failuresByPath, next.path);
      }
      if (following) {
        // Running ahead stays in one scope, so crossing one happens with nothing in flight.
        crossScopes(
          position,
          next.path,
          following.path,
          result.status === "succeeded" ? result.output : null,
        );
        return { kind: "next", next: { kind: "visit", ...following }, opening: started };
      }
      if (node.kind === "checkpoint" && result.status === "succeeded" && result.output === null) {
        return {
          kind: "next",
          next: { kind: "wait", path: next.path, visit: next.visit },
          opening: undefined,
        };
      }
      return { kind: "next", next: { kind: "complete", output: result.output }, opening: undefined };
    }
    default:
      return next satisfies never;
  }
}
