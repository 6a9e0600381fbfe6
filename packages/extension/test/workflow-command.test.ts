import { describe, expect, it } from "vitest";
import { parseAction, parseWorkflowCommand, WORKFLOW_ACTIONS, WORKFLOW_USAGE } from "../src/index.js";

/** The message a refused `/workflow` line shows the user. */
function refusal(line: string): string {
  try {
    parseWorkflowCommand(line);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected /workflow ${line} to be refused`);
}

describe("/workflow arguments", () => {
  it("lists on a bare command", () => {
    expect(parseWorkflowCommand("")).toEqual({ action: "list" });
    expect(parseWorkflowCommand("  list ")).toEqual({ action: "list" });
  });

  it("passes the words after the workflow name verbatim as the task, whatever quotes they hold", () => {
    const tasks = [
      "don't touch the tests",
      `say "hi" to the team`,
      "it's Bob's branch, isn't it",
      'a lone " quote',
      "keep   inner   spacing\nand a second line",
      "words first, then --input-json is just words",
      `'quoted' at the start and 'here'`,
      "\\ backslashes \\n stay",
    ];
    for (const task of tasks) {
      expect(parseWorkflowCommand(`tidy ${task}`)).toEqual({ action: "start", workflow: "tidy", task });
    }
    expect(parseWorkflowCommand("tidy   don't touch the tests  ")).toEqual({
      action: "start",
      workflow: "tidy",
      task: "don't touch the tests",
    });
    expect(parseWorkflowCommand("hello")).toEqual({ action: "start", workflow: "hello" });
  });

  it("drops one pair of quotes around the whole task, as a shell would", () => {
    expect(parseWorkflowCommand(`review-loop "write about durable state"`)).toMatchObject({
      task: "write about durable state",
    });
    expect(parseWorkflowCommand("review-loop 'write about it'")).toMatchObject({ task: "write about it" });
    expect(parseWorkflowCommand(`"./my flows/x.workflow.ts" don't wait`)).toEqual({
      action: "start",
      workflow: "./my flows/x.workflow.ts",
      task: "don't wait",
    });
    expect(parseWorkflowCommand(`'./x.workflow.ts'`)).toEqual({
      action: "start",
      workflow: "./x.workflow.ts",
    });
    // An unclosed quote is part of the name, not an error.
    expect(parseWorkflowCommand(`"tidy now`)).toEqual({ action: "start", workflow: `"tidy`, task: "now" });
  });

  it("takes the whole input with --input-json right after the name", () => {
    expect(parseWorkflowCommand(`approval --input-json '{"title":"x"}'`)).toEqual({
      action: "start",
      workflow: "approval",
      input: { title: "x" },
    });
    expect(parseWorkflowCommand(`approval --input-json {"title":"it's"}`)).toMatchObject({
      input: { title: "it's" },
    });
    expect(refusal("approval --input-json '{nope'")).toMatch(/not valid JSON/);
    expect(refusal("approval --input-json")).toMatch(/needs the input as JSON/);
  });

  it("maps the run verbs to the tool's actions", () => {
    expect(parseWorkflowCommand("status")).toEqual({ action: "status" });
    expect(parseWorkflowCommand("status r-1")).toEqual({ action: "status", runId: "r-1" });
    for (const verb of ["pause", "resume", "cancel", "restart"]) {
      expect(parseWorkflowCommand(`${verb} r-1`)).toEqual({ action: verb, runId: "r-1" });
    }
    expect(parseWorkflowCommand(`answer r-2 {"ok":true}`)).toEqual({
      action: "answer",
      runId: "r-2",
      answer: { ok: true },
    });
    expect(parseWorkflowCommand(`answer r-2 "yes"`)).toEqual({
      action: "answer",
      runId: "r-2",
      answer: "yes",
    });
    expect(parseWorkflowCommand(`submit '{"done":true}'`)).toEqual({
      action: "submit",
      output: { done: true },
    });
    expect(parseWorkflowCommand(`update '{"done":3,"total":10,"message":"three"}'`)).toEqual({
      action: "update",
      done: 3,
      total: 10,
      message: "three",
    });
  });

  it("answers every subcommand missing what it needs with its usage, never a schema message", () => {
    const missing: Record<string, string> = {
      restart: "restart",
      answer: "answer",
      "answer r-1": "answer",
      submit: "submit",
      update: "update",
      "update [1]": "update",
      "tidy --input-json": "start",
      "cancel r-1 r-2": "cancel",
      "list everything": "list",
    };
    for (const [line, action] of Object.entries(missing)) {
      const message = refusal(line);
      expect(message, line).toContain(`Usage: ${WORKFLOW_USAGE[action as keyof typeof WORKFLOW_USAGE]}`);
      expect(message, line).not.toMatch(/expected|received|undefined|Invalid input/i);
    }
    expect(refusal("restart")).toBe(
      "/workflow restart needs a run ID.\nUsage: /workflow restart <runId> — the finished run to run again; /workflow list shows the run IDs",
    );
  });

  it("leaves pause, resume and cancel without a run ID to the session's current run", () => {
    for (const verb of ["pause", "resume", "cancel"] as const) {
      expect(parseWorkflowCommand(verb)).toEqual({ action: verb, current: true });
      expect(parseWorkflowCommand(`  ${verb}  `)).toEqual({ action: verb, current: true });
      expect(parseWorkflowCommand(`${verb} r-7`)).toEqual({ action: verb, runId: "r-7" });
      expect(refusal(`${verb} r-1 r-2`)).toContain(
        `/workflow ${verb} takes one run ID and nothing after it.`,
      );
    }
    // status keeps its own default (chosen when it runs); the tool still needs a run ID to control a run.
    expect(parseWorkflowCommand("status")).toEqual({ action: "status" });
    expect(() => parseAction({ action: "cancel" })).toThrow(/runId is missing/);
  });

  it("adds the usage to a value the tool's check refuses", () => {
    const message = refusal(`cancel ${"r".repeat(300)}`);
    expect(message).toContain("runId");
    expect(message).toContain(`Usage: ${WORKFLOW_USAGE.cancel}`);
    expect(message).not.toContain("r".repeat(300));
  });

  it("has a usage line for every action", () => {
    for (const action of WORKFLOW_ACTIONS) expect(WORKFLOW_USAGE[action]).toMatch(/^\/workflow /);
  });
});

describe("workflow tool arguments", () => {
  it("accepts each action with its own arguments", () => {
    expect(parseAction({ action: "start", workflow: "hello", task: "x", runId: undefined })).toEqual({
      action: "start",
      workflow: "hello",
      task: "x",
    });
    expect(parseAction({ action: "submit", output: { a: 1 } })).toEqual({
      action: "submit",
      output: { a: 1 },
    });
    // A null field is left out, as for every action: it keeps the step's saved value.
    expect(parseAction({ action: "update", done: 2, message: null })).toEqual({ action: "update", done: 2 });
  });

  it("names the missing or wrong argument and what to give", () => {
    expect(() => parseAction({ action: "launch" })).toThrow(/action must be one of: list, start/);
    expect(() => parseAction({})).toThrow(/action must be one of/);
    expect(() => parseAction({ action: "start" })).toThrow(/workflow is missing: give the workflow's name/);
    for (const action of ["pause", "resume", "cancel", "restart"]) {
      expect(() => parseAction({ action })).toThrow(/runId is missing: give the run's ID/);
    }
    expect(parseAction({ action: "restart", runId: "r-1" })).toEqual({ action: "restart", runId: "r-1" });
    expect(() => parseAction({ action: "answer", runId: "r" })).toThrow(/answer is missing/);
    expect(() => parseAction({ action: "submit" })).toThrow(
      /Invalid arguments for workflow submit: output is missing/,
    );
    expect(() => parseAction({ action: "cancel", runId: 7 })).toThrow(/runId: /);
    expect(() => parseAction({ action: "update", done: -1 })).toThrow(
      /Invalid arguments for workflow update: done: /,
    );
    expect(() => parseAction({ action: "update", total: "ten" })).toThrow(/total: /);
  });
});

describe("/workflow --budget", () => {
  it("takes a budget before a start's task words and beside a resume's run ID", () => {
    expect(parseWorkflowCommand("review --budget usd=2,tokens=500k the README")).toEqual({
      action: "start",
      workflow: "review",
      task: "the README",
      budget: { usd: 2, tokens: 500_000 },
    });
    expect(parseWorkflowCommand('review --budget=agentTurns=3 --input-json {"task":"x"}')).toEqual({
      action: "start",
      workflow: "review",
      input: { task: "x" },
      budget: { agentTurns: 3 },
    });
    expect(parseWorkflowCommand("resume review-m3x1-9c2e --budget tokens=1M")).toEqual({
      action: "resume",
      runId: "review-m3x1-9c2e",
      budget: { tokens: 1_000_000 },
    });
    // After the task's first word it is part of the task, as typed.
    expect(parseWorkflowCommand("review the --budget usd=2 flag")).toEqual({
      action: "start",
      workflow: "review",
      task: "the --budget usd=2 flag",
    });
  });

  it("refuses a budget it cannot read with the limit's form, never the value typed", () => {
    const message = refusal("review --budget tokens=sk-SECRET-1 the README");
    expect(message).toContain("Invalid --budget: tokens takes a whole number above 0");
    expect(message).not.toContain("SECRET");
    expect(refusal("resume --budget usd=5")).toContain("/workflow resume --budget needs the run ID.");
  });

  it("takes the model's budget as the tool's budget argument", () => {
    expect(parseAction({ action: "start", workflow: "review", budget: "wallMs=10m" })).toEqual({
      action: "start",
      workflow: "review",
      budget: { wallMs: 600_000 },
    });
  });
});
