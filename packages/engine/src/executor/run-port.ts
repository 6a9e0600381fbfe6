import type { AgentTurnEnding, RunPortWrites, RunRecord, RunSnapshot, WorkerParams } from "@piw/protocol";

/** The answer an agent step gives the submitter: the model sees `reason` and can fix its output. */
export type SubmissionVerdict = { accepted: true } | { accepted: false; reason: string };

/** What happens in the run's Pi session while an agent step waits. */
export type AgentEvent =
  | { type: "submission"; output: unknown; respond(verdict: SubmissionVerdict): void }
  /** The step's turn ended without an accepted submission; `ending` says whose doing it was. */
  | { type: "turn_ended"; ending: AgentTurnEnding }
  /** The step's turn was interrupted and the run asked to pause: park, keep the visit open. */
  | { type: "paused" }
  /** The turn's usage reached the run's budget: check it again, which parks the run. */
  | { type: "budget_exceeded" }
  /**
   * The model cannot answer and asking again will not change that (no credentials, a model the
   * provider does not know, a spent quota): the step fails with `model_unavailable`. `message` says
   * which model and what to do, never what the provider wrote.
   */
  | { type: "model_unavailable"; message: string };

/**
 * Durability as the executor sees it. Each durable method is one fenced transition of the run store,
 * typed by the worker method that carries it (`RunPortWrites`, from the protocol's worker method
 * table): the worker's port forwards it to the host, the embedded port calls the store directly.
 * Every method is required, so a wrapper or a port cannot leave one out (`forwardingPort` builds
 * wrappers). The executor keeps no state that `loadSnapshot` cannot rebuild.
 */
export interface RunPort extends RunPortWrites {
  readRun(): Promise<RunRecord | null>;
  loadSnapshot(): Promise<RunSnapshot>;
  /**
   * A running visit's latest progress, already checked and rate-limited. Not a durable change the
   * executor waits for: the port sends or saves it on its own and never throws.
   */
  reportProgress(report: WorkerParams<"node.progress">): void;
  /** The next submission or turn end for an open agent visit; rejects when `signal` aborts. */
  nextAgentEvent(visit: WorkerParams<"agent.next">, signal: AbortSignal): Promise<AgentEvent>;
}
