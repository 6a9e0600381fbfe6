import { type AgentEvent, AgentEventQueue, type RunPort, ValueTooLarge } from "@piw/engine";
import type {
  AdvanceNodeVisit,
  EnqueueMessage,
  Fence,
  FinishNodeVisit,
  NodeProgressReport,
  RecoveryReason,
  RedefineRun,
  ReserveEffect,
  RunEnding,
  SettleEffect,
  StartNodeVisit,
  WorkerParams,
} from "@piw/protocol";
import { type RunStore, StoreError } from "@piw/store";

/** A value over the store's blob limit was refused whole (the transaction rolled back): the node's failure. */
function refusedAsTooLarge<T>(change: () => T): T {
  try {
    return change();
  } catch (error) {
    if (error instanceof StoreError && error.code === "payload_too_large")
      throw new ValueTooLarge(error.message);
    throw error;
  }
}

/**
 * The engine's port bound directly to a RunStore and one claim: every call is the store's own
 * fenced transition, in this process. Agent events come from whoever drives the run in-process.
 */
export class StoreRunPort implements RunPort {
  private readonly agentEvents = new AgentEventQueue();

  constructor(
    private readonly store: RunStore,
    readonly fence: Fence,
  ) {}

  async readRun() {
    return this.store.getRun(this.fence.runId);
  }
  async markRunning() {
    return this.store.markRunning(this.fence);
  }
  async loadSnapshot() {
    return this.store.readRunSnapshot(this.fence.runId);
  }
  async startNodeVisit(req: StartNodeVisit) {
    return this.store.startNodeVisit(this.fence, req);
  }
  async finishNodeVisit(req: FinishNodeVisit) {
    return refusedAsTooLarge(() => this.store.finishNodeVisit(this.fence, req));
  }
  async advanceNodeVisit(req: AdvanceNodeVisit) {
    return refusedAsTooLarge(() => this.store.advanceNodeVisit(this.fence, req));
  }
  async reserveEffect(req: ReserveEffect) {
    return refusedAsTooLarge(() => this.store.reserveEffect(this.fence, req));
  }
  async settleEffect(req: SettleEffect) {
    return refusedAsTooLarge(() => this.store.settleEffect(this.fence, req));
  }
  async enqueueMessage(req: EnqueueMessage) {
    return refusedAsTooLarge(() => this.store.enqueueMessage(this.fence, req));
  }
  async finishRun(ending: RunEnding) {
    return refusedAsTooLarge(() => this.store.finishRun(this.fence, ending));
  }
  /** Saved like the host saves it; a visit that no longer runs refuses it, which changes nothing. */
  reportProgress(report: NodeProgressReport): void {
    try {
      this.store.saveNodeProgress(this.fence, report);
    } catch {
      // Progress is live data: a store that cannot take it now must not fail the node.
    }
  }

  async scheduleVisit(reason: RecoveryReason) {
    return this.store.scheduleVisit(this.fence, reason);
  }

  async checkBudget(req: WorkerParams<"budget.check">) {
    return this.store.checkBudget(this.fence, req);
  }
  async parkRun(reason: RecoveryReason) {
    return this.store.parkRun(this.fence, reason);
  }
  async redefineRun(req: RedefineRun) {
    return refusedAsTooLarge(() => this.store.redefineRun(this.fence, req));
  }

  /** Hand an agent event (a submission or a turn end) to the waiting agent step. */
  deliverAgentEvent(event: AgentEvent): void {
    this.agentEvents.push(event);
  }

  nextAgentEvent(_visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent> {
    return this.agentEvents.next(signal);
  }
}
