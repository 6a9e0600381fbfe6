import { type AnswerCheck, checkAnswer, type JsonValue } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkpoint, compileWorkflow, compute, defineWorkflow } from "../src/index.js";

/** The answer check the compiler gives a checkpoint with this answer schema. */
function answerCheckFor(answer: z.ZodType): AnswerCheck {
  const workflow = compileWorkflow(
    defineWorkflow({
      name: "ask",
      input: z.object({}),
      startAt: "ask",
      nodes: { ask: checkpoint({ prompt: "?", answer }), after: compute({ run: () => 1 }) },
      edges: { ask: { to: "after" }, after: { to: "done" } },
    }),
  );
  const node = workflow.nodes.get("ask");
  if (node?.kind !== "checkpoint") throw new Error("no checkpoint");
  return node.answerCheck;
}

/** Schemas and answers, right and wrong. What zod accepts, the host must never refuse. */
const CORPUS: Array<[string, z.ZodType, JsonValue[]]> = [
  [
    "an object",
    z.object({ ship: z.boolean(), note: z.string().optional() }),
    [{ ship: true }, { ship: 1 }, {}],
  ],
  ["extra keys on a plain object", z.object({ a: z.string() }), [{ a: "x", b: 1 }, { b: 1 }]],
  ["a strict object", z.strictObject({ a: z.string() }), [{ a: "x" }, { a: "x", b: 1 }]],
  [
    "bounds",
    z.object({ n: z.int().min(1).max(3), s: z.string().min(2).max(4) }),
    [
      { n: 2, s: "abc" },
      { n: 0, s: "abc" },
      { n: 1.5, s: "ab" },
      { n: 2, s: "abcde" },
    ],
  ],
  [
    "an enum and a literal",
    z.object({ e: z.enum(["a", "b"]), l: z.literal(3) }),
    [
      { e: "a", l: 3 },
      { e: "c", l: 3 },
      { e: "a", l: 4 },
    ],
  ],
  [
    "arrays and tuples",
    z.object({ xs: z.array(z.number()).min(1), t: z.tuple([z.string(), z.number()]) }),
    [
      { xs: [1], t: ["a", 1] },
      { xs: [], t: ["a", 1] },
      { xs: [1], t: [1, "a"] },
    ],
  ],
  ["unions", z.union([z.string(), z.object({ k: z.literal("x") })]), ["s", { k: "x" }, { k: "y" }, 3]],
  [
    "a discriminated union",
    z.discriminatedUnion("k", [
      z.object({ k: z.literal("a"), x: z.string() }),
      z.object({ k: z.literal("b") }),
    ]),
    [{ k: "a", x: "1" }, { k: "b" }, { k: "a" }],
  ],
  [
    "nullable and defaults",
    z.object({ a: z.string().nullable(), b: z.number().default(1) }),
    [{ a: null }, { a: "x", b: 2 }, { a: 1 }],
  ],
  ["a record", z.record(z.string(), z.number()), [{ a: 1 }, { a: "x" }]],
  ["a plain regex", z.object({ r: z.string().regex(/^ab/) }), [{ r: "abc" }, { r: "cab" }]],
  [
    "a recursive schema",
    (() => {
      const Tree: z.ZodType = z.object({ n: z.string(), kids: z.array(z.lazy(() => Tree)) });
      return Tree;
    })(),
    [
      { n: "a", kids: [{ n: "b", kids: [] }] },
      { n: "a", kids: [{ n: 1, kids: [] }] },
    ],
  ],
  [
    "formats",
    z.object({ e: z.email(), u: z.uuid(), d: z.iso.datetime(), b: z.base64() }),
    [
      { e: "a@b.co", u: "123e4567-e89b-12d3-a456-426614174000", d: "2026-01-01T00:00:00Z", b: "YWJj" },
      { e: "nope", u: "x", d: "x", b: "!!" },
    ],
  ],
  [
    "an email with its own pattern",
    z.object({ e: z.email({ pattern: z.regexes.html5Email }) }),
    [{ e: "a@b" }],
  ],
  // These change the value before checking it, or lose regex flags in JSON Schema: a JSON Schema
  // check would refuse answers zod accepts.
  ["a coercion", z.object({ n: z.coerce.number().min(5) }), [{ n: "7" }, { n: 7 }]],
  ["a catch", z.object({ s: z.string().catch("x") }), [{ s: 1 }, {}]],
  ["a preprocess", z.object({ n: z.preprocess((v) => Number(v), z.number()) }), [{ n: "3" }]],
  ["a trim before a bound", z.object({ s: z.string().trim().max(2) }), [{ s: " ab " }]],
  [
    "a lower-casing before an enum-like pattern",
    z.object({ s: z.string().toLowerCase().regex(/^ab$/) }),
    [{ s: "AB" }],
  ],
  ["a case-insensitive regex", z.object({ r: z.string().regex(/^ab$/i) }), [{ r: "AB" }]],
  ["a transform", z.object({ n: z.string().transform((s) => s.length) }), [{ n: "abc" }, { n: 3 }]],
  ["a refinement", z.object({ n: z.number() }).refine((v) => v.n > 5), [{ n: 9 }, { n: 1 }, { n: "x" }]],
  ["a custom type", z.object({ c: z.custom<string>((v) => typeof v === "string") }), [{ c: "x" }, { c: 1 }]],
];

describe("the host's answer check that the compiler saves with a checkpoint", () => {
  it.each(CORPUS)("never refuses an answer the schema accepts: %s", (_what, schema, answers) => {
    const check = answerCheckFor(schema);
    for (const answer of answers) {
      if (!schema.safeParse(answer).success) continue;
      expect({ answer, verdict: checkAnswer(check, answer) }).not.toMatchObject({
        verdict: { kind: "refused" },
      });
    }
  });

  it.each(CORPUS.slice(0, 13))(
    "checks on the host what JSON Schema can say: %s",
    (_what, schema, answers) => {
      const check = answerCheckFor(schema);
      expect(check.kind).toBe("json_schema");
      const wrong = answers.filter((answer) => !schema.safeParse(answer).success);
      expect(wrong.length).toBeGreaterThan(0);
      for (const answer of wrong) expect(checkAnswer(check, answer).kind).toBe("refused");
    },
  );

  it.each([
    ["a coercion", z.coerce.number(), "it coerces a value"],
    ["a catch", z.string().catch("x"), "it has a catch"],
    ["a preprocess", z.preprocess((v) => v, z.string()), "it preprocesses a value"],
    ["a trim", z.string().trim(), "it rewrites a string before checking it"],
    ["a regex flag", z.string().regex(/a/i), "a pattern has regex flags"],
  ])("leaves %s to the worker and says why", (_what, schema, why) => {
    expect(answerCheckFor(z.object({ a: schema }))).toEqual({
      kind: "worker_only",
      reason: `the host cannot check this answer: ${why}`,
    });
  });

  it("leaves a schema larger than the host takes to the worker", () => {
    const shape = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`field_${i}`, z.string().describe("x".repeat(20))]),
    );
    expect(answerCheckFor(z.object(shape))).toMatchObject({ kind: "worker_only" });
  });
});
