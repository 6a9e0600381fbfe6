import { describe, expect, it } from "vitest";
import { type AnswerCheck, checkAnswer } from "../src/index.js";

const SCHEMA: AnswerCheck = {
  kind: "json_schema",
  schema: {
    type: "object",
    properties: {
      ship: { type: "boolean" },
      tag: { type: "string", pattern: "^v[0-9]+$" },
      items: {
        type: "array",
        items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
      level: { enum: ["low", "high"] },
    },
    required: ["ship"],
    additionalProperties: false,
  },
};

describe("checkAnswer", () => {
  it("accepts an answer that fits", () => {
    expect(checkAnswer(SCHEMA, { ship: true, tag: "v2", items: [{ name: "a" }], level: "low" })).toEqual({
      kind: "accepted",
    });
  });

  it("names every failing field and rule, never a value", () => {
    const secret = "SECRET-token-1234";
    const verdict = checkAnswer(SCHEMA, {
      ship: secret,
      tag: secret,
      items: [{ name: 7 }],
      level: secret,
      [secret.toLowerCase()]: 1,
    });
    expect(verdict).toMatchObject({ kind: "refused" });
    if (verdict.kind !== "refused") return;
    expect(verdict.problems).toEqual([
      "ship: Invalid input: expected boolean, received string",
      "tag: does not match the required pattern",
      "items[0].name: Invalid input: expected string, received number",
      'level: Invalid option: expected one of "low"|"high"',
      "(answer): has fields the checkpoint does not take: secret-token-1234",
    ]);
    // An unknown key is a field name, not a value; the values themselves never appear.
    expect(verdict.problems.join("\n")).not.toContain(secret);
  });

  it("bounds the list of problems and each problem", () => {
    const wide: AnswerCheck = {
      kind: "json_schema",
      schema: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: 20 }, (_, i) => [`${"f".repeat(300)}${i}`, { type: "number" }]),
        ),
      },
    };
    const verdict = checkAnswer(
      wide,
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${"f".repeat(300)}${i}`, "x"])),
    );
    if (verdict.kind !== "refused") throw new Error(`expected refused, got ${verdict.kind}`);
    expect(verdict.problems).toHaveLength(9);
    expect(verdict.problems.at(-1)).toBe("and 12 more");
    for (const problem of verdict.problems) expect(Buffer.byteLength(problem)).toBeLessThanOrEqual(200);
  });

  it("checks nothing for a worker-only check or a schema it cannot read", () => {
    expect(checkAnswer({ kind: "worker_only", reason: "it coerces a value" }, 1)).toEqual({
      kind: "unchecked",
      reason: "it coerces a value",
    });
    expect(checkAnswer({ kind: "json_schema", schema: { if: { type: "string" } } }, 1)).toMatchObject({
      kind: "unchecked",
    });
  });
});
