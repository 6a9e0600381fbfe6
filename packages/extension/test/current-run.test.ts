import type { RunStatus, RunSummary, TerminalOutcome } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { chooseCurrentRun } from "../src/current-run.js";
import { WorkflowError } from "../src/host-link.js";

/** The fields the choice reads; the rest of a summary plays no part in it. */
function run(runId: string, status: RunStatus, outcome: TerminalOutcome | null = null): RunSummary {
  return { runId, status, outcome, workflowName: "tidy" } as RunSummary;
}

function refusal(verb: Parameters<typeof chooseCurrentRun>[0], runs: RunSummary[]): WorkflowError {
  try {
    chooseCurrentRun(verb, runs);
  } catch (error) {
    if (error instanceof WorkflowError) return error;
    throw error;
  }
  throw new Error(`expected ${verb} to find no current run`);
}

describe("the session's current run, for a verb without a run ID", () => {
  // Newest first, as the host lists them.
  const history = [
    run("r-new-done", "done", "completed"),
    run("r-running", "running"),
    run("r-parked", "parked"),
  ];

  it("is the active run for status, pause and cancel, whatever finished after it", () => {
    for (const verb of ["status", "pause", "cancel"] as const) {
      expect(chooseCurrentRun(verb, history)).toBe("r-running");
    }
    for (const status of ["queued", "starting"] as const) {
      expect(chooseCurrentRun("cancel", [run("r-1", "done"), run("r-2", status)])).toBe("r-2");
    }
  });

  it("is the latest run for status when none is active", () => {
    expect(chooseCurrentRun("status", [run("r-3", "failed", "failed"), run("r-2", "done")])).toBe("r-3");
  });

  it("is the latest parked run for resume, never an active or finished one", () => {
    expect(chooseCurrentRun("resume", history)).toBe("r-parked");
    expect(
      chooseCurrentRun("resume", [run("r-9", "running"), run("r-8", "parked"), run("r-7", "parked")]),
    ).toBe("r-8");
  });

  it("names what is missing and how to give an ID when there is no such run", () => {
    const finished = [run("r-1", "done", "completed"), run("r-0", "cancelled", "cancelled")];
    expect(refusal("cancel", finished).message).toBe(
      "This Pi session has no active workflow run to cancel; nothing was done. Give the run's ID: /workflow cancel <runId> (/workflow list shows the run IDs).",
    );
    expect(refusal("pause", [run("r-p", "parked")]).message).toContain("has no active workflow run to pause");
    expect(refusal("resume", [run("r-a", "running")]).message).toContain(
      "has no parked workflow run to resume; nothing was done. Give the run's ID: /workflow resume <runId>",
    );
    expect(refusal("status", []).message).toContain("has no workflow runs; nothing was done.");
  });
});
