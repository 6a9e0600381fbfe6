import type { RunCommandType, SafeError, WorkerExitDecision } from "@piw/protocol";
import { AGENT_ATTEMPTS_MAX, type LostAgentAttempts } from "./agent-attempts.js";

/** What a worker said about its own end. */
export type WorkerReport =
  // It reported a failure: a refused command, a workflow that would not load, a bug it caught.
  | { kind: "failure"; error: SafeError }
  // It reported an exit without an error.
  | { kind: "clean" }
  // No report: killed, crashed, never started, or no worker was ever launched for the claim.
  | { kind: "none" };

/** Where the run stands for this launch: it still holds the launch's claim, or the claim moved on. */
export type LaunchRunStatus = "starting" | "running" | "moved_on";

export interface WorkerExitFacts {
  /** The command the launch was given. */
  command: RunCommandType;
  /** The run saved progress (or a recovery transition) since the launch was recorded. */
  progressSinceLaunch: boolean;
  report: WorkerReport;
  runStatus: LaunchRunStatus;
  /** False when the host that launched the worker died with it (a new host judges the launch). */
  hostAlive: boolean;
  /** The open visit's isolated agent attempts whose worker was lost mid-step, if any. */
  lostAgentAttempts: LostAgentAttempts | null;
}

/** What follows a worker's end. A park carries its reason; the store adds the launch it names. */
export type WorkerExitVerdict =
  | { kind: "record_only" }
  | { kind: "fail"; error: SafeError }
  | { kind: "requeue" }
  | { kind: "relaunch"; reason: { code: "worker_lost"; message: string } }
  | {
      kind: "park";
      reason:
        | { code: "worker_lost_no_progress"; message: string }
        | { code: "agent_attempts_exhausted"; message: string; path: string };
    };

/** Whether the command runs a run that has never executed: no saved visits, nothing to lose. */
function neverRan(command: RunCommandType): boolean {
  switch (command) {
    case "start":
    case "continue":
    case "restart":
      return true;
    case "resume":
      return false;
    default:
      return command satisfies never;
  }
}

/**
 * The one rule for every way a worker ends (progress, never-ran rules). Only a failure the worker reported
 * fails the run. A process that vanished never does: after progress the run is relaunched; without
 * it the run parks with its reason (resumable, never relaunched by itself). The one exception is
 * the never-ran rule's `starting -> queued`: the host died before a never-run command was accepted, so the
 * new host may simply activate it again.
 */
export function decideWorkerExit(facts: WorkerExitFacts): WorkerExitVerdict {
  if (facts.runStatus === "moved_on") return { kind: "record_only" };
  if (facts.report.kind === "failure") return { kind: "fail", error: facts.report.error };
  if (facts.progressSinceLaunch) {
    // Each isolated attempt saves progress, so progress alone would relaunch a worker that dies on
    // every attempt for ever, each time calling the model again: bound it.
    const lost = facts.lostAgentAttempts;
    if (facts.report.kind === "none" && lost !== null && lost.count >= AGENT_ATTEMPTS_MAX) {
      return {
        kind: "park",
        reason: {
          code: "agent_attempts_exhausted",
          message: `Agent step ${lost.path} lost its worker in ${lost.count} isolated attempts; resume the run after fixing the cause to try again.`,
          path: lost.path,
        },
      };
    }
    return {
      kind: "relaunch",
      reason: { code: "worker_lost", message: "The worker stopped after saving progress; relaunching." },
    };
  }
  switch (facts.runStatus) {
    case "starting":
      if (!facts.hostAlive && neverRan(facts.command)) return { kind: "requeue" };
      return {
        kind: "park",
        reason: {
          code: "worker_lost_no_progress",
          message: facts.hostAlive
            ? `The worker stopped before it accepted its ${facts.command} command; resume the run to launch it again.`
            : `The host stopped before the worker accepted its ${facts.command} command; resume the run to launch it again.`,
        },
      };
    case "running":
      return {
        kind: "park",
        reason: {
          code: "worker_lost_no_progress",
          message:
            "The worker stopped without saving progress since it was launched; resume the run after fixing the cause.",
        },
      };
    default:
      return facts.runStatus satisfies never;
  }
}

/** The decision as saved on the launch row and returned to the host. */
export function savedDecision(verdict: WorkerExitVerdict): WorkerExitDecision {
  switch (verdict.kind) {
    case "record_only":
      return "none";
    case "fail":
      return "failed";
    case "requeue":
      return "requeued";
    case "relaunch":
      return "relaunch";
    case "park":
      return "parked";
    default:
      return verdict satisfies never;
  }
}
