import type { RunStatus, RunSummary, TerminalOutcome } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { RecentRuns, workflowCompletions } from "../src/workflow-completions.js";

function run(runId: string, status: RunStatus, outcome: TerminalOutcome | null = null): RunSummary {
  return { runId, status, outcome, workflowName: "tidy" } as RunSummary;
}

const sources = {
  workflows: ["tidy", "review-loop", "release"],
  runs: [
    run("r-run", "running"),
    run("r-park", "parked"),
    run("r-done", "done", "completed"),
    run("r-wait", "done", "waiting"),
    run("x-fail", "failed", "failed"),
  ],
};

function values(prefix: string): string[] | null {
  return workflowCompletions(prefix, sources)?.map((item) => item.value) ?? null;
}

describe("/workflow completions", () => {
  it("completes the first word to a verb or a workflow name", () => {
    expect(values("")).toEqual([
      "list",
      "status ",
      "pause ",
      "resume ",
      "cancel ",
      "restart ",
      "answer ",
      "submit ",
      "tidy ",
      "review-loop ",
      "release ",
    ]);
    expect(values("re")).toEqual(["resume ", "restart ", "review-loop ", "release "]);
    expect(values("  ti")).toEqual(["tidy "]);
    expect(workflowCompletions("ti", sources)?.[0]).toEqual({
      value: "tidy ",
      label: "tidy",
      description: "start this workflow",
    });
    expect(values("zzz")).toBeNull();
  });

  it("completes a run verb's word to the session's runs that verb can take", () => {
    expect(values("status ")).toEqual([
      "status r-run",
      "status r-park",
      "status r-done",
      "status r-wait",
      "status x-fail",
    ]);
    expect(values("cancel ")).toEqual(["cancel r-run", "cancel r-park"]);
    expect(values("pause ")).toEqual(["pause r-run"]);
    expect(values("resume ")).toEqual(["resume r-park"]);
    expect(values("restart ")).toEqual(["restart r-done", "restart r-wait", "restart x-fail"]);
    expect(values("answer ")).toEqual(["answer r-wait"]);
    expect(values("status x")).toEqual(["status x-fail"]);
    expect(workflowCompletions("cancel r-r", sources)).toEqual([
      { value: "cancel r-run", label: "r-run", description: "tidy (running)" },
    ]);
  });

  it("offers nothing for a task, JSON, or a word past the run ID", () => {
    expect(values("tidy fix the")).toBeNull();
    expect(values("answer r-wait ")).toBeNull();
    expect(values("submit {")).toBeNull();
    expect(values("cancel r-run extra")).toBeNull();
    expect(values("resume r-run")).toBeNull();
  });

  it("shows at most twenty suggestions", () => {
    const many = Array.from({ length: 30 }, (_, i) => run(`r-${i}`, "done"));
    expect(workflowCompletions("status ", { workflows: [], runs: many })).toHaveLength(20);
  });
});

describe("the run list held for completions", () => {
  it("waits for the first list and the first after a command, else answers from the held one", async () => {
    const lists = [
      [run("r-1", "running")],
      [run("r-2", "running"), run("r-1", "done")],
      [run("r-3", "queued"), run("r-2", "done")],
    ];
    let loads = 0;
    const load = async () => lists[Math.min(loads++, lists.length - 1)] ?? [];
    const recent = new RecentRuns(load, 60_000);
    expect((await recent.get()).map((r) => r.runId)).toEqual(["r-1"]);
    expect((await recent.get()).map((r) => r.runId)).toEqual(["r-1"]);
    expect(loads).toBe(1);
    // A command changed the runs: the next completion sees the fresh list.
    recent.stale();
    expect((await recent.get()).map((r) => r.runId)).toEqual(["r-2", "r-1"]);
    expect(loads).toBe(2);

    // Once the held list is old, it still answers at once; the fresh one comes in behind it.
    const aging = new RecentRuns(load, -1);
    expect((await aging.get()).map((r) => r.runId)).toEqual(["r-3", "r-2"]);
    lists.push([run("r-4", "running")]);
    expect((await aging.get()).map((r) => r.runId)).toEqual(["r-3", "r-2"]);
    for (let i = 0; i < 10; i += 1) await Promise.resolve();
    expect((await aging.get()).map((r) => r.runId)).toEqual(["r-4"]);
  });

  it("has no runs to offer while the host cannot be reached, and tries again next time", async () => {
    let fail = true;
    const recent = new RecentRuns(async () => {
      if (fail) throw new Error("no host");
      return [run("r-1", "parked")];
    });
    expect(await recent.get()).toEqual([]);
    fail = false;
    expect((await recent.get()).map((r) => r.runId)).toEqual(["r-1"]);
  });
});
