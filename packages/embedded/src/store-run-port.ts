import { type AgentEvent, AgentEventQueue, type RunPort } from "@piw/engine";
import type {
  AdvanceNodeVisit,
  EnqueueMessage,
  Fence,
  FinishNodeVisit,
  RecoveryReason,
  ReserveEffect,
  RunEnding,
  SettleEffect,
  StartNodeVisit,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";

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
    return this.store.finishNodeVisit(this.fence, req);
  }
  async advanceNodeVisit(req: AdvanceNodeVisit) {
    return this.store.advanceNodeVisit(this.fence, req);
  }
  async reserveEffect(req: ReserveEffect) {
    return this.store.reserveEffect(this.fence, req);
  }
  async settleEffect(req: SettleEffect) {
    return this.store.settleEffect(this.fence, req);
  }
  async enqueueMessage(req: EnqueueMessage) {
    return this.store.enqueueMessage(this.fence, req);
  }
  async finishRun(ending: RunEnding) {
    return this.store.finishRun(this.fence, ending);
  }
  async parkRun(reason: RecoveryReason) {
    return this.store.parkRun(this.fence, reason);
  }

  /** Hand an agent event (a submission or a turn end) to the waiting agent step. */
  deliverAgentEvent(event: AgentEvent): void {
    this.agentEvents.push(event);
  }

  nextAgentEvent(_visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent> {
    return this.agentEvents.next(signal);
  }
}
