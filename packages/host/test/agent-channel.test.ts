import { describe, expect, it } from "vitest";
import { AgentChannel, agentTurnEnding } from "../src/agent-channel.js";

const plan = { path: "plan", visit: 1 };
const build = { path: "build", visit: 1 };

describe("AgentChannel", () => {
  it("hands a submission to the waiting step and the verdict back to the submitter", async () => {
    const channel = new AgentChannel("run-1");
    const next = channel.next(plan);
    const submitted = channel.submit(plan, { steps: ["a"] });
    const event = await next;
    expect(event).toMatchObject({ type: "submission", output: { steps: ["a"] } });
    if (event.type !== "submission") throw new Error("unreachable");
    channel.verdict(event.submissionId, { accepted: false, reason: "steps: too few" });
    await expect(submitted).resolves.toEqual({ accepted: false, reason: "steps: too few" });
  });

  it("holds an event for the visit the worker has not asked for yet", async () => {
    const channel = new AgentChannel("run-1");
    channel.turnEnded(plan, "lost");
    await expect(channel.next(plan)).resolves.toEqual({ type: "turn_ended", ending: "lost" });
  });

  it("drops events of a step that is over, refusing its submission", async () => {
    const channel = new AgentChannel("run-1");
    channel.turnEnded(plan, "completed");
    const late = channel.submit(plan, {});
    const next = channel.next(build);
    await expect(late).rejects.toThrow(/plan is no longer open/);
    channel.turnEnded(build, "completed");
    await expect(next).resolves.toEqual({ type: "turn_ended", ending: "completed" });
  });

  it("parks the waiting step on pause, and every later wait too", async () => {
    const channel = new AgentChannel("run-1");
    const next = channel.next(plan);
    channel.pause();
    await expect(next).resolves.toEqual({ type: "paused" });
    await expect(channel.next(build)).resolves.toEqual({ type: "paused" });
  });

  it("fails waits and pending submissions when closed, and refuses new ones", async () => {
    const channel = new AgentChannel("run-1");
    const next = channel.next(plan);
    const pending = channel.submit(plan, {});
    // The waiting step took the submission; the verdict never comes because the run stops.
    await expect(next).resolves.toMatchObject({ type: "submission" });
    const nextAgain = channel.next(plan);
    channel.close("The run stopped.");
    await expect(pending).rejects.toThrow(/stopped before it judged/);
    await expect(nextAgain).rejects.toThrow("The run stopped.");
    await expect(channel.next(plan)).rejects.toThrow("The run stopped.");
    await expect(channel.submit(plan, {})).rejects.toThrow("The run stopped.");
  });
});

describe("agentTurnEnding", () => {
  it.each([
    ["ended", "completed", "completed"],
    ["ended", "error", "error"],
    ["ended", "aborted", "lost"],
    ["ended", null, "lost"],
    ["lost", null, "lost"],
    ["lost", "completed", "lost"],
    ["open", null, "lost"],
    ["unowned", null, "lost"],
  ] as const)("a turn %s (%s) is %s", (status, endReason, want) => {
    // Only a turn the model ended normally counts against the step's reminder budget.
    expect(agentTurnEnding({ status, endReason })).toBe(want);
  });
});
