import { describe, expect, it } from "vitest";
import { messageCardLine, messageSummary } from "../src/message-card.js";
import { piwDetails } from "../src/piw-message-details.js";

describe("message cards", () => {
  it("says kind, workflow, run, step, visit and state, then the text's first line", () => {
    const line = messageCardLine(
      { kind: "step_prompt", runId: "r-1", path: "plan/draft", visit: 2, workflow: "plan", state: "running" },
      "\n  Draft   the plan.\nSecond line.",
    );
    expect(line).toBe("piw step · plan · run r-1 · plan/draft #2 · running · Draft the plan.");
  });

  it("calls a step's reminder a reminder", () => {
    const facts = { kind: "step_prompt", runId: "r-4", path: "work", visit: 1 } as const;
    expect(
      messageCardLine(
        { ...facts, piwMessageId: "msg:r-4:work:1:nudge:1:2" },
        "Workflow step work is still open.",
      ),
    ).toBe("piw reminder · run r-4 · work #1 · Workflow step work is still open.");
    expect(messageCardLine({ ...facts, piwMessageId: "msg:r-4:work:1:retry:2:1" }, "x")).toMatch(
      /^piw reminder ·/,
    );
    expect(messageCardLine({ ...facts, piwMessageId: "msg:r-4:work:1:step:1" }, "x")).toMatch(/^piw step ·/);
  });

  it("leaves out what a message does not have", () => {
    expect(
      messageCardLine({ kind: "terminal", runId: "r-2", path: null }, "Workflow w completed (run r-2)."),
    ).toBe("piw run · run r-2 · Workflow w completed (run r-2).");
    expect(messageCardLine({ kind: "notify", runId: "r-3", path: "tell", visit: null }, "")).toBe(
      "piw notice · run r-3 · tell",
    );
  });

  it("bounds the summary of a long first line", () => {
    const summary = messageSummary("x".repeat(5_000));
    expect(summary.length).toBe(240);
    expect(summary.endsWith("…")).toBe(true);
  });

  it("cuts a first line of emoji between characters, never inside one", () => {
    const summary = messageSummary(`${"😀".repeat(300)}\nsecond line`);
    expect(summary).not.toMatch(/\p{Cs}/u);
    expect([...summary]).toHaveLength(240);
    expect(summary).toBe(`${"😀".repeat(239)}…`);
  });

  it("reads only piw's own details: another shape draws as Pi draws it", () => {
    const details = {
      piwMessageId: "msg:r:work:1:step_prompt",
      runId: "r",
      kind: "step_prompt",
      path: "work",
    };
    expect(piwDetails(details)).toEqual(details);
    expect(piwDetails({ ...details, kind: "shout" })).toBeUndefined();
    expect(piwDetails({ level: "info" })).toBeUndefined();
    expect(piwDetails(null)).toBeUndefined();
  });
});
