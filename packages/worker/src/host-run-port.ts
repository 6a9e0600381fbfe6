import { type AgentEvent, type RunPort, type SubmissionVerdict, ValueTooLarge } from "@piw/engine";
import {
  type AdvanceNodeVisit,
  type EnqueueMessage,
  type FinishNodeVisit,
  type MethodTable,
  type NodeProgressReport,
  type RecoveryReason,
  type RedefineRun,
  type ReserveEffect,
  RpcError,
  type RpcPeer,
  type RunEnding,
  type SettleEffect,
  type StartNodeVisit,
  type WorkerParams,
  type workerMethods,
} from "@piw/protocol";
import type { WorkerAssignment } from "./load-run-workflow.js";

/** The worker's end of the host channel: it serves nothing and calls the worker methods. */
export type HostPeer = RpcPeer<MethodTable, typeof workerMethods>;

/** The protocol's bound on a rejection reason the model sees. */
const MAX_VERDICT_REASON = 2048;

/**
 * A request the channel refused before the host handled it (its frame too large or too deep): to the
 * engine, a value it cannot save. Any other failure, `reply_too_large` included (the host did handle
 * that request), stays what it is.
 */
async function refusedAsTooLarge<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof RpcError && (error.code === "frame_too_large" || error.code === "frame_too_deep"))
      throw new ValueTooLarge(error.message);
    throw error;
  }
}

/** Settle with `work`, or reject with the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The engine's port over the host channel: every durable change is one request, and the host
 * applies it as a fenced transition of its store with this launch's claim. Replies arrive already
 * parsed by the protocol's schemas, so a Transition here is the store's own typed result.
 */
export class HostRunPort implements RunPort {
  /** `assignment` is the host's reply to `worker.hello`: the run and its snapshot come with it. */
  constructor(
    private readonly peer: HostPeer,
    private readonly assignment: WorkerAssignment,
  ) {}

  async readRun() {
    return this.assignment.run;
  }
  markRunning() {
    return this.peer.call("run.markRunning", {});
  }
  async loadSnapshot() {
    return this.assignment.snapshot;
  }
  startNodeVisit(req: StartNodeVisit) {
    return refusedAsTooLarge(this.peer.call("visit.start", req));
  }
  finishNodeVisit(req: FinishNodeVisit) {
    return refusedAsTooLarge(this.peer.call("visit.finish", req));
  }
  advanceNodeVisit(req: AdvanceNodeVisit) {
    return refusedAsTooLarge(this.peer.call("visit.advance", req));
  }
  reserveEffect(req: ReserveEffect) {
    return refusedAsTooLarge(this.peer.call("effect.reserve", req));
  }
  settleEffect(req: SettleEffect) {
    return refusedAsTooLarge(this.peer.call("effect.settle", req));
  }
  enqueueMessage(req: EnqueueMessage) {
    return refusedAsTooLarge(this.peer.call("message.enqueue", req));
  }
  finishRun(ending: RunEnding) {
    return refusedAsTooLarge(this.peer.call("run.finish", ending));
  }
  scheduleVisit(reason: RecoveryReason) {
    return refusedAsTooLarge(this.peer.call("visit.schedule", reason));
  }

  parkRun(reason: RecoveryReason) {
    return refusedAsTooLarge(this.peer.call("run.park", reason));
  }
  checkBudget(req: WorkerParams<"budget.check">) {
    return this.peer.call("budget.check", req);
  }
  redefineRun(req: RedefineRun) {
    return refusedAsTooLarge(this.peer.call("run.redefine", req));
  }

  async nextAgentEvent(visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent> {
    const event = await untilAborted(
      this.peer.call("agent.next", { path: visit.path, visit: visit.visit }),
      signal,
    );
    if (event.type !== "submission") return event;
    return {
      type: "submission",
      output: event.output,
      respond: (verdict) => this.sendVerdict(event.submissionId, verdict),
    };
  }

  /** Progress is live data: the engine does not wait for it, and a lost channel ends the worker anyway. */
  reportProgress(report: NodeProgressReport): void {
    this.peer.call("node.progress", report).catch(() => undefined);
  }

  /** The engine answers a submission without waiting for delivery; a lost channel ends the worker anyway. */
  private sendVerdict(submissionId: string, verdict: SubmissionVerdict): void {
    const bounded = verdict.accepted
      ? verdict
      : { accepted: false as const, reason: verdict.reason.slice(0, MAX_VERDICT_REASON) };
    this.peer.call("agent.verdict", { submissionId, verdict: bounded }).catch(() => {
      process.stderr.write(`piw-worker: the verdict on submission ${submissionId} was not delivered\n`);
    });
  }
}
