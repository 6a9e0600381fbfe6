import {
  type ClockReason,
  isClockReason,
  PAUSED_AT_NODE_BOUNDARY,
  type RecoveryReason,
  type RunRecord,
  type Transition,
} from "@piw/protocol";
import { expectSaved, FenceLost, NodeFailure, RunParked } from "./execution-signals.js";
import { forwardingPort } from "./forwarding-port.js";
import type { RunPort } from "./run-port.js";

// What a fork's branch sees of the run's port: its parks, and its starts on a pause, go through the
// fork (fork-runner.ts), which parks the run once, when none of its branches runs.

/** What a branch may ask its fork to park the run for: the clock, or a pause at a node boundary. */
export type ParkReason = ClockReason | Extract<RecoveryReason, { code: "paused" }>;

/** A start the store refused because a pause was asked for (it parked nothing: see `holdOnPause`). */
function heldByPause<T>(t: Transition<T>): boolean {
  return t.kind === "recoveryRequired" && t.reason.code === "paused";
}

/**
 * A branch's port: the parent's, but a park goes through the fork, which parks the run once. Its
 * starts ask the store to hold rather than park on a pause: the branch then rests at that boundary
 * until the fork parks the run. A start that already asks (a fork nested in this branch) passes through.
 */
export function branchPort(
  parent: RunPort,
  park: (reason: ParkReason) => Promise<Transition<RunRecord>>,
  onHeld: (req: { path: string; visit: number }) => void,
): RunPort {
  const parkRun = (reason: RecoveryReason) =>
    isClockReason(reason) || reason.code === "paused" ? park(reason) : parent.parkRun(reason);
  const holdThen = async <T>(t: Transition<T>): Promise<Transition<T>> => {
    // Returned once the run is parked; the sequence then stops on the refusal as at any park.
    expectSaved(await park(PAUSED_AT_NODE_BOUNDARY));
    return t;
  };
  const startNodeVisit: RunPort["startNodeVisit"] = async (req) => {
    if (req.holdOnPause) return parent.startNodeVisit(req);
    const t = await parent.startNodeVisit({ ...req, holdOnPause: true });
    if (!heldByPause(t)) return t;
    onHeld(req);
    return holdThen(t);
  };
  const advanceNodeVisit: RunPort["advanceNodeVisit"] = async (req) => {
    if (req.start.holdOnPause) return parent.advanceNodeVisit(req);
    const t = await parent.advanceNodeVisit({ ...req, start: { ...req.start, holdOnPause: true } });
    return (t.kind === "applied" || t.kind === "adopted") && heldByPause(t.value.started) ? holdThen(t) : t;
  };
  return forwardingPort(parent, { parkRun, startNodeVisit, advanceNodeVisit });
}

/**
 * The error a stopped fork throws. A park first (the one the fork made, else a branch's): the other
 * branches' writes are refused because the run is parked. Then a lost fence (nothing more can be
 * saved), then a failure that ends the run.
 */
export function firstStop(errors: unknown[], parkedFor: ParkReason | undefined): unknown {
  const parked = errors.find((e) => e instanceof RunParked);
  if (parked && parkedFor) return new RunParked(parkedFor);
  return (
    parked ??
    errors.find((e) => e instanceof FenceLost) ??
    errors.find((e) => e instanceof NodeFailure) ??
    errors[0]
  );
}
