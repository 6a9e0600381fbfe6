import { describe, expect, it } from "vitest";
import { parseAction, parseWorkflowCommand, splitArguments } from "../src/index.js";

describe("/workflow arguments", () => {
  it("lists on a bare command", () => {
    expect(parseWorkflowCommand("")).toEqual({ action: "list" });
    expect(parseWorkflowCommand("  list ")).toEqual({ action: "list" });
  });

  it("starts a workflow with the rest as the task", () => {
    expect(parseWorkflowCommand("review-loop write about 'durable state'")).toEqual({
      action: "start",
      workflow: "review-loop",
      task: "write about durable state",
    });
    expect(parseWorkflowCommand("hello")).toEqual({ action: "start", workflow: "hello" });
  });

  it("takes the whole input with --input-json, and refuses it mixed with task words", () => {
    expect(parseWorkflowCommand(`approval --input-json '{"title":"x"}'`)).toEqual({
      action: "start",
      workflow: "approval",
      input: { title: "x" },
    });
    expect(() => parseWorkflowCommand(`approval words --input-json '{}'`)).toThrow(/not both/);
    expect(() => parseWorkflowCommand("approval --input-json '{nope'")).toThrow(/not valid JSON/);
    expect(() => parseWorkflowCommand("approval --input-json")).toThrow(/needs the input/);
  });

  it("maps the run verbs to the tool's actions", () => {
    expect(parseWorkflowCommand("status")).toEqual({ action: "status" });
    expect(parseWorkflowCommand("cancel r-1")).toEqual({ action: "cancel", runId: "r-1" });
    expect(parseWorkflowCommand("restart r-1")).toEqual({ action: "restart", runId: "r-1" });
    expect(parseWorkflowCommand(`answer r-2 {"ok":true}`)).toEqual({
      action: "answer",
      runId: "r-2",
      answer: { ok: true },
    });
    expect(() => parseWorkflowCommand("answer r-2")).toThrow(/Usage: \/workflow answer/);
  });

  it("splits quoted words and refuses an unclosed quote", () => {
    expect(splitArguments(`a "b c" 'd'`)).toEqual(["a", "b c", "d"]);
    expect(splitArguments(`""`)).toEqual([""]);
    expect(() => splitArguments(`a "b`)).toThrow(/Unclosed "/);
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
  });

  it("names the missing or wrong argument", () => {
    expect(() => parseAction({ action: "launch" })).toThrow(/action must be one of: list, start/);
    expect(() => parseAction({})).toThrow(/action must be one of/);
    expect(() => parseAction({ action: "start" })).toThrow(/workflow: /);
    expect(() => parseAction({ action: "cancel" })).toThrow(/runId/);
    expect(() => parseAction({ action: "restart" })).toThrow(/runId/);
    expect(parseAction({ action: "restart", runId: "r-1" })).toEqual({ action: "restart", runId: "r-1" });
    expect(() => parseAction({ action: "answer", runId: "r" })).toThrow(/answer/);
    expect(() => parseAction({ action: "submit" })).toThrow(/Invalid arguments for workflow submit/);
  });
});
