import { compileWorkflow } from "@piw/engine";
import { describe, expect, it } from "vitest";
import {
  commandFailure,
  decideNext,
  endsBy,
  type Limits,
  MAX_REPAIRS,
  type MonitorState,
  nextCheckAt,
  type Observation,
  outputTail,
} from "../src/monitor-decide.js";
import monitor from "../src/monitor.js";
import { checkReport } from "../src/monitor-prompts.js";

const NOW = Date.parse("2026-12-03T20:00:00Z");
const limits: Limits = {
  everyMs: 60_000,
  maxChecks: 10,
  deadline: null,
  allowAct: true,
  allowRepair: true,
  allowImplement: false,
};

const seen = (over: Partial<Observation> = {}): Observation => ({
  source: "check",
  goal: "pending",
  summary: "not yet",
  failure: null,
  stop: null,
  next: null,
  action: null,
  output: null,
  ...over,
});
const failing = (failure: string): Observation => seen({ goal: "failing", summary: failure, failure });

/** The states a sequence of observations makes, one check a minute. */
function run(observations: Observation[], at: Limits = limits): MonitorState[] {
  const states: MonitorState[] = [];
  for (const [i, observation] of observations.entries()) {
    states.push(decideNext(states.at(-1) ?? null, observation, at, NOW + i * 60_000));
  }
  return states;
}

describe("monitor's decision", () => {
  it("waits while the goal is pending, until the next interval, and ends when it is met", () => {
    const [first, second] = run([seen(), seen({ goal: "met", summary: "the file is there" })]);
    expect(first).toMatchObject({
      check: 1,
      decision: "wait",
      ending: null,
      nextCheckAt: "2026-12-03T20:01:00.000Z",
      endsBy: "2026-12-03T20:09:00.000Z",
    });
    expect(second).toMatchObject({
      check: 2,
      decision: "met",
      ending: "met",
      nextCheckAt: null,
      endsBy: null,
    });
    expect(second?.history.map((h) => [h.check, h.goal, h.decision])).toEqual([
      [1, "pending", "wait"],
      [2, "met", "met"],
    ]);
  });

  it("repairs a failure once, and stops with the reason when the same failure comes back", () => {
    const states = run([failing("exit 2: build broke"), failing("exit 2: build broke")]);
    expect(states.map((s) => [s.decision, s.ending])).toEqual([
      ["repair", null],
      ["stop", "repeated_failure"],
    ]);
    expect(states[1]?.reason).toBe("The same failure came back after a repair: exit 2: build broke");
  });

  it("repairs a failure again when it came back only after a check that passed", () => {
    const states = run([failing("flaky"), seen(), failing("flaky")]);
    expect(states.map((s) => s.decision)).toEqual(["repair", "wait", "repair"]);
    expect(states.map((s) => s.repaired)).toEqual(["flaky", null, "flaky"]);
  });

  it(`stops after ${MAX_REPAIRS} repairs of different failures`, () => {
    const states = run([failing("a"), failing("b"), failing("c"), failing("d")]);
    expect(states.map((s) => s.decision)).toEqual(["repair", "repair", "repair", "stop"]);
    expect(states[3]?.ending).toBe("repeated_failure");
  });

  it("enforces the input's authority: no repair or act when they are not allowed", () => {
    const watchOnly = { ...limits, allowAct: false, allowRepair: false };
    expect(run([failing("x")], watchOnly)[0]).toMatchObject({ decision: "stop", ending: "not_allowed" });
    const proposal = seen({ source: "inspector", next: "act", action: "restart the job" });
    expect(run([proposal], watchOnly)[0]?.decision).toBe("wait");
    expect(run([proposal])[0]).toMatchObject({ decision: "act", reason: "restart the job" });
  });

  it("repairs a code defect through autoimplement only when implement is allowed, and counts it as a repair", () => {
    const defect = (failure: string) =>
      seen({ source: "inspector", goal: "failing", failure, next: "implement", action: "make sum add" });
    // Not granted: the same proposal gets a one-step repair.
    expect(run([defect("exit 2: sum")])[0]?.decision).toBe("repair");
    const granted = { ...limits, allowImplement: true };
    const states = run([defect("exit 2: sum"), defect("exit 2: sum")], granted);
    expect(states.map((s) => [s.decision, s.ending, s.repairs])).toEqual([
      ["implement", null, 1],
      ["stop", "repeated_failure", 1],
    ]);
    // A failure the inspector finds a one-step fix for is still repaired in one step.
    expect(run([failing("exit 2: flaky")], granted)[0]?.decision).toBe("repair");
    // With implement the only repair granted, every failure goes to autoimplement, within the limit.
    const onlyImplement = { ...granted, allowRepair: false };
    const four = run([failing("a"), failing("b"), failing("c"), failing("d")], onlyImplement);
    expect(four.map((s) => s.decision)).toEqual(["implement", "implement", "implement", "stop"]);
    // A pending goal is never implemented.
    expect(run([seen({ source: "inspector", next: "implement", action: "x" })], granted)[0]?.decision).toBe(
      "wait",
    );
  });

  it("ends at stopWhen, at maxChecks and at the deadline", () => {
    expect(run([seen({ stop: "the release was cancelled" })])[0]).toMatchObject({
      decision: "stop",
      ending: "stop_when",
    });
    const three = run([seen(), seen(), seen()], { ...limits, maxChecks: 3 });
    expect(three.map((s) => s.ending)).toEqual([null, null, "max_checks"]);
    expect(three[2]?.reason).toMatch(/^Not met after 3 checks \(maxChecks\)/);
    const deadline = NOW + 90_000;
    const late = run([seen(), seen(), seen()], { ...limits, deadline });
    // The second wait is cut to the deadline; the check after it ends the loop.
    expect(late.map((s) => [s.decision, s.nextCheckAt])).toEqual([
      ["wait", "2026-12-03T20:01:00.000Z"],
      ["wait", "2026-12-03T20:01:30.000Z"],
      ["stop", null],
    ]);
    expect(late[2]?.ending).toBe("deadline");
  });

  it("computes the next check and the latest end within the deadline", () => {
    expect(nextCheckAt(NOW, limits)).toBe(NOW + 60_000);
    expect(nextCheckAt(NOW, { ...limits, deadline: NOW + 5 })).toBe(NOW + 5);
    expect(endsBy(4, NOW, limits)).toBe(NOW + 6 * 60_000);
    expect(endsBy(4, NOW, { ...limits, deadline: NOW + 1000 })).toBe(NOW + 1000);
  });

  it("names a command's failure by its exit code and last line, and keeps the end of long output", () => {
    expect(commandFailure(2, "building\n", "error: x is missing\n\n")).toBe("exit 2: error: x is missing");
    expect(commandFailure(null, "", "")).toBe("no exit code");
    const tail = outputTail("a".repeat(5000), "the end", 100);
    expect(tail).toHaveLength(100);
    expect(tail.endsWith("\nthe end")).toBe(true);
  });

  it("reports each check in one line with what comes next", () => {
    const [state] = run([seen({ summary: "2 of 5 jobs done" })]);
    if (state === undefined) throw new Error("no state");
    expect(checkReport(state, seen({ summary: "2 of 5 jobs done" }), 10)).toBe(
      "Monitor check 1 of 10: not met yet (2 of 5 jobs done). Next check at 20:01:00 UTC; ends by 20:09:00 UTC at the latest.",
    );
  });
});

describe("the monitor workflow", () => {
  it("compiles, takes the goal as its free words and refuses input beyond its bounds", () => {
    const compiled = compileWorkflow(monitor);
    expect(compiled.textInput).toBe("task");
    const parse = (value: unknown) => compiled.inputSchema?.safeParse(value).success;
    expect(parse({ task: "the build is green", check: "test -e done", everyMinutes: 0.05 })).toBe(true);
    expect(parse({ task: "the build is green", allow: ["repair", "implement"], publish: true })).toBe(true);
    // A repair through autoimplement is a mount of its own: its workspace is not the monitor's.
    expect(compiled.nodes.get("implementation/branch")?.kind).toBe("action");
    for (const bad of [
      { task: "  " },
      { task: "x", everyMinutes: 0 },
      { task: "x", maxChecks: 1001 },
      { task: "x", allow: ["deploy"] },
      { task: "x", allow: ["implement"], publish: "yes" },
      { task: "x", deadline: "tomorrow" },
    ]) {
      expect(parse(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});
