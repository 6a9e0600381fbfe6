import { INPUT_SUMMARY_MAX_CHARS } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { summarizeInput } from "../src/input-summary.js";

describe("summarizeInput", () => {
  it("shows one key as key: value and several as a folded object", () => {
    expect(summarizeInput({ task: "fix the login bug" })).toBe('task: "fix the login bug"');
    expect(summarizeInput({ change: "bump zod", dryRun: true, opts: { a: 1 }, tags: ["x"] })).toBe(
      '{change: "bump zod", dryRun: true, opts: {…}, tags: […]}',
    );
    expect(summarizeInput({ "two words": 1 })).toBe('"two words": 1');
    expect(summarizeInput({})).toBe("{}");
    expect(summarizeInput(null)).toBe("null");
    expect(summarizeInput("hi")).toBe('"hi"');
    expect(summarizeInput([1, "a"])).toBe('[1, "a"]');
  });

  it("stays on one line and within the bound, with an ellipsis where it was cut", () => {
    const long = summarizeInput({ task: `${"x".repeat(10_000)}\nsecond line` });
    expect(long).toHaveLength(INPUT_SUMMARY_MAX_CHARS);
    expect(long.endsWith("…")).toBe(true);
    expect(summarizeInput({ a: "one\ntwo" })).toBe('a: "one\\ntwo"');
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`key${i}`, i]));
    const wide = summarizeInput(many);
    expect(wide).toHaveLength(INPUT_SUMMARY_MAX_CHARS);
    expect(wide.startsWith("{key0: 0, key1: 1")).toBe(true);
    expect(summarizeInput(Array.from({ length: 20 }, (_, i) => i))).toBe("[0, 1, 2, 3, 4, 5, 6, 7, …]");
  });
});
