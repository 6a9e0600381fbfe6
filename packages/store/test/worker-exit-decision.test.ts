import type { RunCommandType } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { AGENT_ATTEMPTS_MAX } from "../src/agent-attempts.js";
import {
  decideWorkerExit,
  type LaunchRunStatus,
  savedDecision,
  type WorkerExitVerdict,
  type WorkerReport,
} from "../src/worker-exit-decision.js";

const STARTUP_ERROR = { code: "source_changed", message: "The workflow file changed." } as const;
const FAILURE: WorkerReport = { kind: "failure", error: STARTUP_ERROR };
const REPORTS = { failure: FAILURE, clean: { kind: "clean" }, none: { kind: "none" } } as const;
type ReportName = keyof typeof REPORTS;
type Kind = WorkerExitVerdict["kind"];

const COMMANDS: RunCommandType[] = ["start", "resume", "continue", "restart"];

/**
 * Every combination of where the run stands, what the worker reported, progress since launch and
 * whether its host lived, with the verdict for a command that never ran (start, continue, restart)
 * and for a resume of saved state. Nothing that vanished fails a run.
 */
const TABLE: [
  LaunchRunStatus,
  ReportName,
  progress: boolean,
  hostAlive: boolean,
  fresh: Kind,
  resume: Kind,
][] = [
  // The claim moved on (cancelled, finished, superseded): the exit is only recorded.
  ["moved_on", "failure", false, true, "record_only", "record_only"],
  ["moved_on", "failure", false, false, "record_only", "record_only"],
  ["moved_on", "failure", true, true, "record_only", "record_only"],
  ["moved_on", "failure", true, false, "record_only", "record_only"],
  ["moved_on", "clean", false, true, "record_only", "record_only"],
  ["moved_on", "clean", false, false, "record_only", "record_only"],
  ["moved_on", "clean", true, true, "record_only", "record_only"],
  ["moved_on", "clean", true, false, "record_only", "record_only"],
  ["moved_on", "none", false, true, "record_only", "record_only"],
  ["moved_on", "none", false, false, "record_only", "record_only"],
  ["moved_on", "none", true, true, "record_only", "record_only"],
  ["moved_on", "none", true, false, "record_only", "record_only"],
  // Starting: only a reported startup failure fails (the progress rule); a vanished worker parks.
  ["starting", "failure", false, true, "fail", "fail"],
  ["starting", "failure", false, false, "fail", "fail"],
  ["starting", "failure", true, true, "fail", "fail"],
  ["starting", "failure", true, false, "fail", "fail"],
  ["starting", "clean", false, true, "park", "park"],
  ["starting", "clean", false, false, "requeue", "park"],
  ["starting", "clean", true, true, "relaunch", "relaunch"],
  ["starting", "clean", true, false, "relaunch", "relaunch"],
  ["starting", "none", false, true, "park", "park"],
  ["starting", "none", false, false, "requeue", "park"],
  ["starting", "none", true, true, "relaunch", "relaunch"],
  ["starting", "none", true, false, "relaunch", "relaunch"],
  // Running: the progress rule.
  ["running", "failure", false, true, "fail", "fail"],
  ["running", "failure", false, false, "fail", "fail"],
  ["running", "failure", true, true, "fail", "fail"],
  ["running", "failure", true, false, "fail", "fail"],
  ["running", "clean", false, true, "park", "park"],
  ["running", "clean", false, false, "park", "park"],
  ["running", "clean", true, true, "relaunch", "relaunch"],
  ["running", "clean", true, false, "relaunch", "relaunch"],
  ["running", "none", false, true, "park", "park"],
  ["running", "none", false, false, "park", "park"],
  ["running", "none", true, true, "relaunch", "relaunch"],
  ["running", "none", true, false, "relaunch", "relaunch"],
];

const SAVED: Record<Kind, string> = {
  record_only: "none",
  fail: "failed",
  requeue: "requeued",
  relaunch: "relaunch",
  park: "parked",
};

describe("decideWorkerExit", () => {
  it("has one row for every combination of its inputs", () => {
    const keys = new Set(
      TABLE.map(([status, report, progress, alive]) => `${status}/${report}/${progress}/${alive}`),
    );
    expect(keys.size).toBe(TABLE.length);
    expect(TABLE).toHaveLength(3 * 3 * 2 * 2);
  });

  const cases = TABLE.flatMap(([runStatus, report, progress, hostAlive, fresh, resume]) =>
    COMMANDS.map(
      (command) =>
        [command, runStatus, report, progress, hostAlive, command === "resume" ? resume : fresh] as const,
    ),
  );

  it.each(cases)(
    "%s, run %s, report %s, progress %s, host alive %s -> %s",
    (command, runStatus, report, progressSinceLaunch, hostAlive, want) => {
      const verdict = decideWorkerExit({
        command,
        runStatus,
        report: REPORTS[report],
        progressSinceLaunch,
        hostAlive,
        lostAgentAttempts: null,
      });
      expect(verdict.kind).toBe(want);
      expect(savedDecision(verdict)).toBe(SAVED[want]);
      switch (verdict.kind) {
        case "fail":
          expect(verdict.error).toEqual(STARTUP_ERROR);
          break;
        case "relaunch":
          expect(verdict.reason.code).toBe("worker_lost");
          break;
        case "park":
          expect(verdict.reason.code).toBe("worker_lost_no_progress");
          // The reason says what happened: before the command was accepted, or after, without progress.
          if (runStatus === "starting") {
            expect(verdict.reason.message).toContain(`accepted its ${command} command`);
            expect(verdict.reason.message).toContain(hostAlive ? "The worker stopped" : "The host stopped");
          } else {
            expect(verdict.reason.message).toContain("without saving progress");
          }
          break;
        case "record_only":
        case "requeue":
          break;
        default:
          verdict satisfies never;
      }
    },
  );

  it("never fails a run without a failure the worker reported", () => {
    for (const [command, runStatus, report, progress, hostAlive] of cases) {
      if (report === "failure") continue;
      const verdict = decideWorkerExit({
        command,
        runStatus,
        report: REPORTS[report],
        progressSinceLaunch: progress,
        hostAlive,
        lostAgentAttempts: { path: "review", count: AGENT_ATTEMPTS_MAX },
      });
      expect(verdict.kind).not.toBe("fail");
    }
  });
});

describe("a worker lost in isolated agent attempts", () => {
  const facts = {
    command: "resume" as const,
    runStatus: "running" as const,
    report: { kind: "none" as const },
    progressSinceLaunch: true,
    hostAlive: true,
  };

  it("is relaunched while fewer than AGENT_ATTEMPTS_MAX attempts of the visit were lost", () => {
    const verdict = decideWorkerExit({
      ...facts,
      lostAgentAttempts: { path: "review", count: AGENT_ATTEMPTS_MAX - 1 },
    });
    expect(verdict.kind).toBe("relaunch");
  });

  it("parks the run with agent_attempts_exhausted, naming the step and the count, at the bound", () => {
    const verdict = decideWorkerExit({
      ...facts,
      lostAgentAttempts: { path: "review", count: AGENT_ATTEMPTS_MAX },
    });
    expect(verdict).toEqual({
      kind: "park",
      reason: {
        code: "agent_attempts_exhausted",
        message: `Agent step review lost its worker in ${AGENT_ATTEMPTS_MAX} isolated attempts; resume the run after fixing the cause to try again.`,
        path: "review",
      },
    });
  });

  it("fails, not parks, when the worker reported its failure", () => {
    const verdict = decideWorkerExit({
      ...facts,
      report: { kind: "failure", error: STARTUP_ERROR },
      lostAgentAttempts: { path: "review", count: AGENT_ATTEMPTS_MAX },
    });
    expect(verdict.kind).toBe("fail");
  });
});
