import { type AnswerCheck, type CheckpointView, checkAnswer, type JsonValue } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { type ZodType, z } from "zod";
import { answerExample, quotedExample, renderInspector, renderWidgetLines } from "../src/index.js";
import { historyOf } from "./history-fixture.js";
import { manifestNode, runViewOf } from "./run-view-fixture.js";

function jsonSchema(schema: ZodType): Record<string, JsonValue> {
  const emitted = z.toJSONSchema(schema, { io: "input" }) as Record<string, JsonValue>;
  delete emitted.$schema;
  return emitted;
}

/** Answer schemas as checkpoints write them; each example must be an answer the checkpoint accepts. */
const ANSWERS: [string, ZodType, JsonValue][] = [
  [
    "a boolean field and an optional note",
    z.object({ approved: z.boolean(), comment: z.string().optional() }),
    { approved: true },
  ],
  ["an enum", z.enum(["ship", "hold"]), "ship"],
  ["a literal", z.object({ kind: z.literal("go") }), { kind: "go" }],
  [
    "a non-empty array of non-empty strings",
    z.object({ reviewers: z.array(z.string().min(1)).min(1) }),
    { reviewers: ["text"] },
  ],
  ["a long minimum length", z.string().min(6), "textxx"],
  ["a short maximum length", z.string().max(2), "te"],
  ["bounded numbers", z.object({ n: z.number().int().min(3).max(9), x: z.number().gt(1) }), { n: 3, x: 1.5 }],
  ["a number below an exclusive maximum", z.number().lt(0), -0.5],
  ["a nullable string", z.object({ note: z.string().nullable() }), { note: "text" }],
  ["a union", z.union([z.number(), z.string()]), 0],
  [
    "a discriminated union",
    z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("a"), n: z.number() }),
      z.object({ kind: z.literal("b") }),
    ]),
    { kind: "a", n: 0 },
  ],
  ["a default", z.object({ mode: z.string().default("fast") }), {}],
  ["a tuple", z.tuple([z.string(), z.boolean()]), ["text", true]],
  ["a record", z.record(z.string(), z.number()), {}],
  [
    "recursion",
    z.object({
      name: z.string(),
      get children() {
        return z.array(z.object({ n: z.number() }));
      },
    }),
    { name: "text", children: [] },
  ],
];

describe("an example answer from the checkpoint's schema", () => {
  it.each(ANSWERS)("fits %s", (_what, schema, expected) => {
    const emitted = jsonSchema(schema);
    const example = answerExample(emitted);
    expect(example).toEqual(expected);
    expect(schema.safeParse(example).success).toBe(true);
    const check: AnswerCheck = { kind: "json_schema", schema: emitted };
    expect(checkAnswer(check, example as JsonValue)).toEqual({ kind: "accepted" });
  });

  it("is quoted for a shell, and a placeholder without a schema", () => {
    expect(quotedExample({ answerSchema: { const: "it's" } })).toBe(`'"it'\\''s"'`);
    expect(quotedExample({ answerSchema: null })).toBe("'<json>'");
    expect(answerExample(null)).toBeUndefined();
  });
});

const gateManifest = {
  version: 1 as const,
  workflow: "approval",
  startPath: "plan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [
    manifestNode("plan", "compute"),
    { ...manifestNode("approve", "checkpoint"), answeredBy: "human" as const },
  ],
  mounts: [],
  edges: [
    { from: "plan", to: { kind: "node" as const, path: "approve" } },
    { from: "approve", to: { kind: "exit" as const, exit: "done" } },
  ],
};

function waitingView(checkpoint: Partial<CheckpointView> = {}) {
  return runViewOf(gateManifest, {
    status: "done",
    outcome: "waiting",
    cursor: { path: "approve", visit: 1 },
    checkpoint: {
      path: "approve",
      visit: 1,
      prompt: "Approve the plan:\n2 steps?",
      answeredBy: "human",
      answerSchema: jsonSchema(z.object({ approved: z.boolean(), comment: z.string().optional() })),
      ...checkpoint,
    },
  });
}

describe("a waiting checkpoint in the Pi widget", () => {
  it("shows its prompt, who answers it, and a valid answer to type", () => {
    expect(renderWidgetLines(waitingView(), { width: 100 }).slice(-2)).toEqual([
      "? approve: Approve the plan: 2 steps?",
      `  answered by a person: /workflow answer run_01 '{"approved":true}'`,
    ]);
  });

  it("says the model answers a model checkpoint, and keeps within the line budget", () => {
    const lines = renderWidgetLines(waitingView({ answeredBy: "model" }), { width: 100, maxLines: 3 });
    expect(lines).toHaveLength(3);
    expect(lines.at(-1)).toBe("  answered by the model: the model answers it with the workflow tool");
  });

  it("shows nothing of a checkpoint once the run is not waiting", () => {
    const lines = renderWidgetLines({ ...waitingView(), outcome: "completed" }, { width: 100 });
    expect(lines.join("\n")).not.toContain("answered by");
  });
});

describe("a waiting checkpoint in the inspector", () => {
  it("shows the whole prompt, who answers, the answer schema and an example", () => {
    const lines = renderInspector(waitingView({ answeredBy: "either" }), historyOf("run_01", []), "approve", {
      width: 80,
    });
    const text = lines.join("\n");
    expect(text).toContain("waiting for an answer (visit 1), answered by a person or the model");
    expect(lines).toContain("  Approve the plan:");
    expect(lines).toContain("  2 steps?");
    expect(text).toContain("answer schema");
    expect(text).toContain('"required": [');
    expect(lines).toContain(`example  '{"approved":true}'`);
    // Another node of the same run shows no checkpoint.
    expect(
      renderInspector(waitingView(), historyOf("run_01", []), "plan", { width: 80 }).join("\n"),
    ).not.toContain("waiting for an answer");
  });
});
