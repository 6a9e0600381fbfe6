import type { RunPort } from "./run-port.js";

/** Every method of the port: a method added to `RunPort` does not compile until it is named here. */
const METHOD_SET = {
  readRun: true,
  markRunning: true,
  loadSnapshot: true,
  startNodeVisit: true,
  finishNodeVisit: true,
  advanceNodeVisit: true,
  reserveEffect: true,
  settleEffect: true,
  enqueueMessage: true,
  finishRun: true,
  parkRun: true,
  scheduleVisit: true,
  redefineRun: true,
  checkBudget: true,
  reportProgress: true,
  nextAgentEvent: true,
} as const satisfies { [K in keyof RunPort]-?: true };

/** The name of every method of `RunPort`. */
export const RUN_PORT_METHODS = Object.keys(METHOD_SET) as ReadonlyArray<keyof RunPort>;

/** The methods a wrapper takes over; each may call `inner` itself. */
export type PortInterception = Partial<RunPort>;

/**
 * A port that forwards every method to `inner`, but those `intercept` takes over. Wrappers (the
 * worker's crash hook, a fork's branch port) are built with it, so none can leave a method out and
 * lose what the inner port does with it.
 */
export function forwardingPort(inner: RunPort, intercept: PortInterception): RunPort {
  const port: Partial<Record<keyof RunPort, unknown>> = {};
  for (const name of RUN_PORT_METHODS) {
    port[name] = intercept[name] ?? inner[name].bind(inner);
  }
  return port as RunPort;
}
