import {
  type JsonValue,
  type NodeVisitResult,
  type SafeError,
  safeError,
  type VisitDeadline,
  visitMessageId,
} from "@piw/protocol";
import type {
  ActionContext,
  CompiledNode,
  CompiledWorkflow,
  NodeContext,
  NodeFailureInfo,
} from "../compiler/compiled-workflow.js";
import { effectId, nodeVisitId } from "../identity/execution-identity.js";
import {
  DeadlinePassed,
  expectSaved,
  FenceLost,
  NodeFailure,
  RunParked,
  ShellExitFailure,
  ValueTooLarge,
} from "./execution-signals.js";
import type { RunPort } from "./run-port.js";
import { type DebugLog, toSafeError } from "./safe-failure.js";
import { runShell, type ShellResult } from "./shell-runner.js";
import { runWait } from "./wait-runner.js";
import { actionExec, commandCwd } from "./action-exec.js";
import { runAgent } from "./agent-step.js";
import { runWorkspace } from "./run-workspace.js";
import { presetAnswer } from "./approval-gate.js";
import { checkProgressOnly, type VisitProgress, visitProgress } from "./visit-progress.js";
import type { AgentPlacement } from "./agent-session.js";

export interface NodeRun {
  workflow: CompiledWorkflow;
  node: CompiledNode;
  port: RunPort;
  runId: string;
  visit: number;
  attempt: number;
  /** The visit's saved deadline (null: none); the timer runs for what is left of it. */
  deadline: VisitDeadline | null;
  /** When the visit's wait is due, as saved when it first parked (null: not yet scheduled). */
  dueAt?: number | null;
  runInput: unknown;
  outputsByPath: ReadonlyMap<string, unknown>;
  /** The routed failures later nodes see as `ctx.failures`. */
  failuresByPath?: ReadonlyMap<string, NodeFailureInfo>;
  signal: AbortSignal;
  onProcessGroup?: (pgid: number, alive: boolean) => void;
  /** The run's environment, which a shell node's commands start from; default this process's. */
  env?: Readonly<Record<string, string>>;
  /** The raw text of what workflow code threw; the saved error never carries it. */
  debug?: DebugLog;
  /** Where agent steps may run; without it every agent step runs in the run's conversation. */
  agents?: AgentPlacement;
}

/** The author's view of a node: its scope's input and the latest outputs of its scope's nodes. */
export function nodeContextFor(
  workflow: CompiledWorkflow,
  runInput: unknown,
  outputsByPath: ReadonlyMap<string, unknown>,
  path: string,
  visit: number,
  signal: AbortSignal,
  failuresByPath: ReadonlyMap<string, NodeFailureInfo> = new Map(),
  progress: (update: unknown) => void = checkProgressOnly,
): NodeContext {
  const node = workflow.nodes.get(path);
  const scope = node?.scope ?? "";
  // Built on first read (during the node's run, before its own output is added): collecting a scope's
  // outputs is O(nodes in the scope), which a large workflow would otherwise pay on every visit.
  let outputs: Record<string, unknown> | undefined;
  let failures: Record<string, NodeFailureInfo> | undefined;
  return {
    input: workflow.scopeInput(scope, runInput, outputsByPath),
    get outputs() {
      outputs ??= workflow.scopeOutputs(scope, outputsByPath);
      return outputs;
    },
    get failures() {
      failures ??= workflow.scopeOutputs(scope, failuresByPath) as Record<string, NodeFailureInfo>;
      return failures;
    },
    node: { path, name: node?.name ?? path.slice(path.lastIndexOf("/") + 1), visit },
    ...(node?.mapIndex === undefined ? {} : { mapIndex: node.mapIndex }),
    signal,
    progress,
  };
}

function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch {
    throw new NodeFailure("output_invalid", "The node returned a value that is not JSON.");
  }
}

/** Managed effects for one attempt of one visit. Ordinals restart at each attempt, so identities repeat. */
export function effectsFor(
  run: Pick<NodeRun, "runId" | "node" | "port" | "visit" | "debug">,
): ActionContext["effects"] {
  const visitId = nodeVisitId({ runId: run.runId, path: run.node.path, visit: run.visit });
  let ordinal = 0;
  const perform = async <R>(
    mode: "idempotent" | "manual",
    type: string,
    request: unknown,
    fn: (request: unknown) => Promise<R> | R,
  ): Promise<R> => {
    const id = effectId(visitId, type, ordinal);
    const reserved = await run.port.reserveEffect({
      effectId: id,
      path: run.node.path,
      visit: run.visit,
      effectType: type,
      ordinal,
      mode,
      request: toJson(request),
    });
    // One identity asked for with another request: the workflow is not deterministic. Fail the node
    // rather than guess which request is right (the execution-identity rule).
    if (reserved.kind === "conflict" && reserved.evidence.kind === "request_mismatch") {
      throw new NodeFailure(
        "effect_conflict",
        `Effect ${type} #${ordinal} of ${run.node.path} was requested again with a different request.`,
      );
    }
    const reservation = expectSaved(reserved);
    ordinal += 1;
    if (reservation.status === "settled") {
      if (reservation.result.ok) return reservation.result.value as R;
      throw new NodeFailure(reservation.result.error.code, reservation.result.error.message);
    }
    let value: R;
    try {
      value = await fn(request);
    } catch (error) {
      const failure = toSafeError(error, {
        code: "node_failed",
        subject: `Effect ${type} of ${run.node.path}`,
      });
      run.debug?.(failure.debug);
      expectSaved(await run.port.settleEffect({ effectId: id, result: { ok: false, error: failure.error } }));
      throw new NodeFailure(failure.error.code, failure.error.message);
    }
    expectSaved(await run.port.settleEffect({ effectId: id, result: { ok: true, value: toJson(value) } }));
    return value;
  };
  return {
    idempotent: (type, request, fn) => perform("idempotent", type, request, fn),
    manual: (type, request, fn) => perform("manual", type, request, fn),
  };
}

/**
 * Run `work` until the visit's saved deadline; the node's signal aborts on timeout or cancel. After
 * a timeout the work gets up to WIND_DOWN_MS to stop (an isolated agent session saves what it cost)
 * before the visit is reported timed out. Work that succeeds before that judgement is a success: a
 * reopened visit whose deadline has passed still finishes when its work is already done (its effects
 * settled and adopted), and a deadline never undoes work that succeeded.
 */
async function withDeadline<T>(run: NodeRun, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { deadline } = run;
  const controller = new AbortController();
  const onCancel = () => controller.abort(run.signal.reason);
  run.signal.addEventListener("abort", onCancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    if (deadline === null) return;
    // A reopened visit (after a crash or a resume) gets only what is left of its first deadline.
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline.at - Date.now()));
  });
  const working = work(controller.signal);
  try {
    const first = await Promise.race([working, timeout]);
    if (first !== TIMED_OUT || deadline === null) return first as T;
    controller.abort(new DeadlinePassed());
    let windDown: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      working.then(
        (value) => ({ succeeded: true as const, value }),
        () => ({ succeeded: false as const }),
      ),
      new Promise<{ succeeded: false }>((resolve) => {
        windDown = setTimeout(() => resolve({ succeeded: false }), WIND_DOWN_MS);
      }),
    ]);
    clearTimeout(windDown);
    if (stopped.succeeded) return stopped.value;
    throw new NodeFailure("node_timed_out", timedOutMessage(run.node.path, deadline.timeoutMs), true);
  } finally {
    if (timer) clearTimeout(timer);
    run.signal.removeEventListener("abort", onCancel);
  }
}

const TIMED_OUT = Symbol("timed out");

/** How long a timed-out visit's work may take to stop before the visit is reported timed out. */
const WIND_DOWN_MS = 5_000;

async function produce(run: NodeRun, signal: AbortSignal, progress: VisitProgress): Promise<unknown> {
  const { node } = run;
  const ctx = nodeContextFor(
    run.workflow,
    run.runInput,
    run.outputsByPath,
    node.path,
    run.visit,
    signal,
    run.failuresByPath,
    progress.report,
  );
  switch (node.kind) {
    case "compute":
      return node.run(ctx);
    case "action":
      return node.run({
        ...ctx,
        effects: effectsFor(run),
        run: { id: run.runId, workflow: run.workflow.name },
        exec: actionExec(run, signal),
      });
    case "decision": {
      const choice = node.decide(ctx);
      if (!node.choices.includes(choice)) {
        throw new NodeFailure("output_invalid", `Decision ${node.path} chose an undeclared case.`);
      }
      return choice;
    }
    case "notify":
      expectSaved(
        await run.port.enqueueMessage({
          messageId: visitMessageId({ runId: run.runId, path: node.path, visit: run.visit }, "notify"),
          kind: "notify",
          path: node.path,
          visit: run.visit,
          body: node.message(ctx),
          triggerTurn: false,
        }),
      );
      return null;
    case "checkpoint":
      return presetAnswer(node, ctx);
    case "shell": {
      const command = node.command(ctx);
      const cwd = commandCwd(node.cwd, runWorkspace(run.workflow, node, run.outputsByPath));
      let result: ShellResult;
      try {
        result = await runShell({
          command,
          ...(cwd === undefined ? {} : { cwd }),
          ...(node.env === undefined ? {} : { env: node.env }),
          ...(run.env === undefined ? {} : { baseEnv: run.env }),
          ...(run.onProcessGroup ? { onProcessGroup: run.onProcessGroup } : {}),
          signal,
        });
      } catch (error) {
        // A spawn error names the program (`spawn <argv[0]> ENOENT`), which may come from the input.
        const failure = toSafeError(error, {
          code: "node_failed",
          subject: `Starting the command of ${node.path}`,
        });
        run.debug?.(failure.debug);
        throw new NodeFailure(failure.error.code, failure.error.message);
      }
      // Only the exit status is told: stdout and stderr may carry anything the command saw.
      if (result.aborted) throw new NodeFailure("cancelled", `Command of ${node.path} was stopped.`);
      if (result.exitCode === null) {
        throw new NodeFailure("node_failed", `Command of ${node.path} was killed by ${result.signal}.`);
      }
      const report = {
        exitCode: result.exitCode,
        stdout: result.stdout.trimEnd(),
        stderr: result.stderrTail.trimEnd(),
      };
      if (!node.okExitCodes.includes(report.exitCode)) {
        throw new ShellExitFailure(`Command of ${node.path} exited with code ${report.exitCode}.`, report);
      }
      return node.parse ? node.parse(report, ctx) : report;
    }
    case "agent":
      return runAgent(run, node, ctx, runWorkspace(run.workflow, node, run.outputsByPath));
    case "wait":
      return runWait(
        { node, port: run.port, visit: run.visit, dueAt: run.dueAt ?? null, signal, now: Date.now },
        ctx,
      );
    case "parallel":
    case "map":
      // Its branches are visits of their own: the executor runs them (fork-runner.ts), never this.
      throw new Error(`Node ${node.path} of kind ${node.kind} reached the single-node runner.`);
    default:
      return node satisfies never;
  }
}

/** The node's failure when a value it produced could not be saved; the reason names only sizes. */
export function tooLarge(path: string, error: ValueTooLarge): SafeError {
  return safeError("output_too_large", `A value of ${path} is too large to save: ${error.message}`);
}

/** The saved reason of a visit that ran past its deadline; the host repeats it to a late submit. */
function timedOutMessage(path: string, timeoutMs: number): string {
  return `Step ${path} timed out after ${timeoutMs} ms.`;
}

/** "Compute node review/check": how a saved error names the node whose code threw. */
function nodeSubject(node: CompiledNode): string {
  return `${node.kind.charAt(0).toUpperCase()}${node.kind.slice(1)} node ${node.path}`;
}

/** Run one open visit and say how it ended. Stops (throws) only for a lost fence or a park. */
export async function runNode(run: NodeRun): Promise<NodeVisitResult> {
  const where = { path: run.node.path, visit: run.visit, attempt: run.attempt };
  const progress = visitProgress(where, run.port.reportProgress.bind(run.port));
  try {
    const output = toJson(await withDeadline(run, (signal) => produce(run, signal, progress)));
    // A checkpoint stops the run; its successor is chosen by the continuation, from the accepted answer.
    // A gate that answered itself (auto, skip) routes on that answer like any other node.
    if (run.node.kind === "checkpoint" && output === null) return { status: "succeeded", output, next: null };
    const target = run.workflow.next(run.node.path, output);
    return { status: "succeeded", output, next: target.kind === "node" ? target.path : null };
  } catch (error) {
    if (error instanceof FenceLost || error instanceof RunParked) throw error;
    // An effect's request or value, or a message, that the port could not take.
    if (error instanceof ValueTooLarge) return { status: "failed", error: tooLarge(run.node.path, error) };
    const failure = toSafeError(error, { code: "node_failed", subject: nodeSubject(run.node) });
    if (!(error instanceof NodeFailure)) run.debug?.(failure.debug);
    if (error instanceof NodeFailure && error.timedOut) return { status: "timed_out", error: failure.error };
    // The report rides along for an outcome route to keep; an unrouted failure drops it unsaved.
    return error instanceof ShellExitFailure
      ? { status: "failed", error: failure.error, output: error.report as unknown as JsonValue }
      : { status: "failed", error: failure.error };
  } finally {
    // The latest progress reaches the host before the visit's end does (the store then drops it).
    progress.flush();
  }
}
