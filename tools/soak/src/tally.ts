import type { LoadedWorkflow } from "@piw/engine";
import { isClockReason, type RunSummary } from "@piw/protocol";
import type { Expected } from "./invariants.js";

/** A workflow the soak starts runs of, and what its completed runs must show. */
export interface SoakWorkflow {
  kind: "chain" | "parallel" | "map";
  loaded: LoadedWorkflow;
  expected: Expected;
}

export interface SoakRun {
  runId: string;
  tag: string;
  workflow: SoakWorkflow;
  resumes: number;
  /** When the soak first saw its current park for a person; it resumes the run once the hold is over. */
  parkedSeenAt?: number;
  /** Set when the soak cancelled the run: the time the cancel's reply came back, or null if it was lost. */
  cancel?: { repliedAt: number | null };
  /** The status and outcome it first ended with: an ended run never changes again. */
  ended?: string;
  /** Its end was looked at (completed and checked, or a violation recorded). */
  checked: boolean;
  completed: boolean;
}

/** The soak's figures, in the order its progress lines print them. */
function newFigures() {
  return {
    hostKills: 0,
    workerKills: 0,
    branchKills: 0,
    idleWorkerKills: 0,
    runsStarted: 0,
    parkedDuringStorm: 0,
    resumesDuringStorm: 0,
    parkedAfterStorm: 0,
    resumesPastDeadline: 0,
    effectExecutions: 0,
    settledEffectsReExecuted: 0,
    cancelsApplied: 0,
    cancelsLost: 0,
    cancelsInFlight: 0,
    parallelCompleted: 0,
    mapCompleted: 0,
    runsCancelled: 0,
    reserveResends: 0,
    reservesAdopted: 0,
    notDoneOrResumable: 0,
  };
}

/** Every run the soak started, what it counted, and every invariant violation it found. */
export class SoakTally {
  readonly runs = new Map<string, SoakRun>();
  readonly violations: string[] = [];
  readonly figures = newFigures();
  readonly parkReasons = new Map<string, number>();

  countReason(code: string): void {
    this.parkReasons.set(code, (this.parkReasons.get(code) ?? 0) + 1);
  }
}

export const TERMINAL = new Set(["done", "failed", "cancelled"]);

/** A run parked on a wait or retry pause, not paused: the host's clock wakes it, nobody resumes it. */
export function onClock(summary: RunSummary): boolean {
  return summary.status === "parked" && !summary.paused && isClockReason(summary.recoveryReason);
}

/** Whether runs of this workflow fork: the parallel and the map workflow. */
export function forks(workflow: SoakWorkflow | undefined): boolean {
  return workflow !== undefined && workflow.kind !== "chain";
}
