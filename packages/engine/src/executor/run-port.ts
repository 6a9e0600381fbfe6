import type {
  AdvanceNodeVisit,
  AgentTurnEnding,
  ClockReason,
  EffectState,
  EnqueueMessage,
  FinishNodeVisit,
  MessageRecord,
  NodeProgressReport,
  NodeVisitAdvance,
  NodeVisitState,
  RecoveryReason,
  RedefineRun,
  ReserveEffect,
  RunEnding,
  RunRecord,
  RunSnapshot,
  SettleEffect,
  StartNodeVisit,
  Transition,
} from "@piw/protocol";

/** The answer an agent step gives the submitter: the model sees `reason` and can fix its output. */
export type SubmissionVerdict = { accepted: true } | { accepted: false; reason: string };

/** What happens in the run's Pi session while an agent step waits. */
export type AgentEvent =
  | { type: "submission"; output: unknown; respond(verdict: SubmissionVerdict): void }
  /** The step's turn ended without an accepted submission; `ending` says whose doing it was. */
  | { type: "turn_ended"; ending: AgentTurnEnding }
  /** The step's turn was interrupted and the run asked to pause: park, keep the visit open. */
  | { type: "paused" }
  /**
   * The model cannot answer and asking again will not change that (no credentials, a model the
   * provider does not know, a spent quota): the step fails with `model_unavailable`. `message` says
   * which model and what to do, never what the provider wrote.
   */
  | { type: "model_unavailable"; message: string };

/**
 * Durability as the executor sees it. Every method is one fenced transition of the run store: the
 * worker's port forwards it to the host, the embedded port calls the store directly. The executor
 * keeps no state that `loadSnapshot` cannot rebuild.
 */
export interface RunPort {
  readRun(): Promise<RunRecord | null>;
  markRunning(): Promise<Transition<RunRecord>>;
  loadSnapshot(): Promise<RunSnapshot>;
  startNodeVisit(req: StartNodeVisit): Promise<Transition<NodeVisitState>>;
  finishNodeVisit(req: FinishNodeVisit): Promise<Transition<NodeVisitState>>;
  /**
   * Optional: `finishNodeVisit` and the `startNodeVisit` of the node it succeeded into, in one
   * transaction. The executor uses it when present; without it, it makes the two calls.
   */
  advanceNodeVisit?(req: AdvanceNodeVisit): Promise<Transition<NodeVisitAdvance>>;
  reserveEffect(req: ReserveEffect): Promise<Transition<EffectState>>;
  settleEffect(req: SettleEffect): Promise<Transition<EffectState>>;
  enqueueMessage(req: EnqueueMessage): Promise<Transition<MessageRecord>>;
  finishRun(ending: RunEnding): Promise<Transition<RunRecord>>;
  parkRun(reason: RecoveryReason): Promise<Transition<RunRecord>>;
  /**
   * Optional: save an open visit's wait or retry schedule without parking the run, so a parallel
   * branch keeps its due time while other branches still run. Without it, a branch that waits with
   * others gets its time counted again when the run wakes.
   */
  scheduleVisit?(reason: ClockReason): Promise<Transition<RunRecord>>;
  /** Follow the run's changed workflow from now on (a resume that accepted the changes). */
  redefineRun(req: RedefineRun): Promise<Transition<RunRecord>>;
  /**
   * Optional: a running visit's latest progress, already checked and rate-limited. Not a durable
   * change the executor waits for: the port sends or saves it on its own and never throws.
   */
  reportProgress?(report: NodeProgressReport): void;
  /** The next submission or turn end for an open agent visit; rejects when `signal` aborts. */
  nextAgentEvent(visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent>;
}
