import { describe, expect, it } from "vitest";
import { type core, type ZodType, z } from "zod";
import {
  agent,
  CompileError,
  checkpoint,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  jsonSchemaOf,
  MemoryRunPort,
  UNREPRESENTABLE_NOTE,
} from "../src/index.js";

function stepWorkflow(output: ZodType, title?: string) {
  return compileWorkflow(
    defineWorkflow({
      name: "contract",
      startAt: "write",
      nodes: { write: agent({ prompt: "Write the note.", output, ...(title ? { title } : {}) }) },
      edges: { write: { to: "done" } },
    }),
  );
}

function schemaOf(schema: ZodType): unknown {
  const result = jsonSchemaOf(schema, "output");
  if (!result.ok) throw new Error(result.problem);
  return result.schema;
}

/** Every construct the examples and docs use, with the JSON Schema the model is shown for it. */
const CONSTRUCTS: [string, ZodType, unknown, unknown[], unknown[]][] = [
  [
    "an object of strings with a minimum length",
    z.object({ task: z.string().min(1) }),
    { type: "object", properties: { task: { type: "string", minLength: 1 } }, required: ["task"] },
    [{ task: "x" }],
    [{}, { task: "" }, { task: 1 }],
  ],
  [
    "an array",
    z.array(z.string()).min(1),
    { type: "array", items: { type: "string" }, minItems: 1 },
    [["a"]],
    [[], [1]],
  ],
  [
    "an enum",
    z.enum(["approve", "reject"]),
    { type: "string", enum: ["approve", "reject"] },
    ["approve"],
    ["maybe"],
  ],
  [
    "an optional field",
    z.object({ approved: z.boolean(), comment: z.string().optional() }),
    {
      type: "object",
      properties: { approved: { type: "boolean" }, comment: { type: "string" } },
      required: ["approved"],
    },
    [{ approved: true }, { approved: false, comment: "x" }],
    [{ comment: "x" }],
  ],
  [
    "a nullable field",
    z.object({ note: z.string().nullable() }),
    { type: "object", properties: { note: { type: ["string", "null"] } }, required: ["note"] },
    [{ note: null }, { note: "x" }],
    [{}],
  ],
  ["a literal", z.literal("done"), { type: "string", const: "done" }, ["done"], ["open"]],
  ["a union", z.union([z.string(), z.number()]), { type: ["string", "number"] }, ["a", 1], [true]],
  [
    "a discriminated union",
    z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("ok") }),
      z.object({ kind: z.literal("fail"), why: z.string() }),
    ]),
    {
      oneOf: [
        { type: "object", properties: { kind: { type: "string", const: "ok" } }, required: ["kind"] },
        {
          type: "object",
          properties: { kind: { type: "string", const: "fail" }, why: { type: "string" } },
          required: ["kind", "why"],
        },
      ],
    },
    [{ kind: "ok" }, { kind: "fail", why: "x" }],
    [{ kind: "fail" }],
  ],
  [
    "a default, which makes the field optional to submit",
    z.object({ repo: z.string().default("piw") }),
    { type: "object", properties: { repo: { type: "string", default: "piw" } } },
    [{}, { repo: "x" }],
    [{ repo: 1 }],
  ],
  [
    "descriptions",
    z.object({ text: z.string().describe("the note itself") }).describe("a note"),
    {
      type: "object",
      description: "a note",
      properties: { text: { type: "string", description: "the note itself" } },
      required: ["text"],
    },
    [{ text: "x" }],
    [{}],
  ],
  [
    "an integer, without zod's safe-integer bounds",
    z.object({ count: z.number().int().min(0) }),
    { type: "object", properties: { count: { type: "integer", minimum: 0 } }, required: ["count"] },
    [{ count: 0 }],
    [{ count: -1 }, { count: 1.5 }],
  ],
  [
    "a record",
    z.record(z.string(), z.number()),
    { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" } },
    [{ a: 1 }],
    [{ a: "x" }],
  ],
  [
    "a tuple",
    z.tuple([z.string(), z.number()]),
    {
      type: "array",
      prefixItems: [{ type: "string" }, { type: "number" }],
      items: false,
      minItems: 2,
      maxItems: 2,
    },
    [["a", 1]],
    [["a"]],
  ],
  [
    "any JSON (z.json)",
    z.json(),
    {
      anyOf: [
        { type: "string" },
        { type: "number" },
        { type: "boolean" },
        { type: "null" },
        { type: "array", items: { $ref: "#" } },
        { type: "object", propertyNames: { type: "string" }, additionalProperties: { $ref: "#" } },
      ],
    },
    [{ a: [1, null] }],
    [],
  ],
  [
    "a refinement, which the schema cannot say and the workflow still checks",
    z.string().refine((s) => s.startsWith("x")),
    { type: "string" },
    ["x"],
    [1],
  ],
  [
    "a transform, shown by its input",
    z.string().transform((s) => s.length),
    { type: "string" },
    ["abc"],
    [1],
  ],
  [
    "a custom type, shown as any value with a note",
    z.object({ c: z.custom<string>((v) => typeof v === "string") }),
    { type: "object", properties: { c: { description: UNREPRESENTABLE_NOTE } }, required: ["c"] },
    [{ c: "x" }],
    [{}],
  ],
];

describe("the JSON Schema of an agent output", () => {
  it.each(CONSTRUCTS)("says %s", (_what, schema, expected, accepted, refused) => {
    const emitted = schemaOf(schema);
    expect(emitted).toEqual(expected);
    // What the model is shown accepts what the zod schema accepts, and refuses what it refuses.
    const shown = z.fromJSONSchema(emitted as core.JSONSchema.JSONSchema);
    for (const value of accepted) {
      expect(schema.safeParse(value).success).toBe(true);
      expect(shown.safeParse(value).success).toBe(true);
    }
    for (const value of refused) {
      expect(schema.safeParse(value).success).toBe(false);
      expect(shown.safeParse(value).success).toBe(false);
    }
  });

  it("is a compile error for a type JSON cannot carry, naming what to use instead", () => {
    const fails = (output: ZodType) => {
      try {
        stepWorkflow(output);
      } catch (error) {
        expect(error).toBeInstanceOf(CompileError);
        return (error as CompileError).problems.map((p) => `${p.path}: ${p.message}`);
      }
      throw new Error("compiled");
    };
    expect(fails(z.object({ at: z.date() }))).toEqual([
      "write: output needs a value JSON cannot carry: a Date (use z.iso.datetime() or z.coerce.date())",
    ]);
    expect(fails(z.bigint())[0]).toContain("a BigInt");
    expect(fails(z.map(z.string(), z.string()))[0]).toContain("a Map (use z.record())");
    expect(fails(z.set(z.string()))[0]).toContain("a Set (use z.array())");
    // Coerced, a JSON string becomes the date: shown as any value, accepted at compile time.
    expect(schemaOf(z.object({ at: z.coerce.date() }))).toEqual({
      type: "object",
      properties: { at: { description: UNREPRESENTABLE_NOTE } },
      required: ["at"],
    });
  });

  it("is a compile error when a step's schema is too large to carry, and only unshown for a checkpoint", () => {
    const huge = z.object(
      Object.fromEntries(
        Array.from({ length: 3000 }, (_, i) => [`field_${i}`, z.string().describe("x".repeat(20))]),
      ),
    );
    expect(() => stepWorkflow(huge)).toThrow(/output's JSON Schema is \d+ KiB, over the 64 KiB/);
    const gate = compileWorkflow(
      defineWorkflow({
        name: "gate",
        startAt: "ask",
        nodes: { ask: checkpoint({ prompt: "Fill it in", answer: huge }) },
        edges: { ask: { to: "done" } },
      }),
    );
    expect(gate.nodes.get("ask")).toMatchObject({ kind: "checkpoint", answerSchema: null });
  });
});

describe("the step contract at the end of every agent step prompt", () => {
  it("names the step, carries the output's JSON Schema and says how to submit", async () => {
    const output = z.object({ verdict: z.enum(["approve", "reject"]), note: z.string().optional() });
    const port = new MemoryRunPort({ runId: "run-1" });
    port.status = "running";
    const running = executeRun({ workflow: stepWorkflow(output, "Review the draft"), port });
    port.submit({ verdict: "approve" });
    await running;
    const body = port.messages[0]?.body ?? "";
    expect(body.startsWith("Write the note.\n\n---\nWorkflow step contract\n")).toBe(true);
    expect(body).toContain('Step: write "Review the draft" (path write, visit 1, attempt 1, run run-1)');
    expect(body).toContain(JSON.stringify(schemaOf(output)));
    expect(body).toContain('call the workflow tool with {"action":"submit","output":<the output>}');
  });

  it("rejects a submit naming each failing field against the schema, never the submitted values", async () => {
    const output = z.object({
      title: z.string().min(3),
      tags: z.array(z.enum(["a", "b"])),
      count: z.number().int(),
    });
    const port = new MemoryRunPort({ runId: "run-2" });
    port.status = "running";
    const running = executeRun({ workflow: stepWorkflow(output), port });
    port.submit({ title: "SECRET-VALUE-x", tags: ["SECRET-TAG"], count: "SECRET-COUNT" });
    port.submit({ title: "ok title", tags: ["a"], count: 2 });
    expect(await running).toMatchObject({ kind: "completed" });
    const [rejected] = port.verdicts;
    expect(rejected).toEqual({
      accepted: false,
      reason:
        "Output rejected: tags[0]: not one of its allowed values; count: expected number. Fix these fields to match the output schema in the step contract and submit again.",
    });
    expect(JSON.stringify(rejected)).not.toContain("SECRET");
  });

  it("bounds the rejection of an output that fails everywhere", async () => {
    const output = z.object(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, z.string()])));
    const port = new MemoryRunPort({ runId: "run-3" });
    port.status = "running";
    const running = executeRun({ workflow: stepWorkflow(output), port });
    port.submit({});
    port.endTurn();
    port.endTurn();
    port.endTurn();
    await running;
    const reason = (port.verdicts[0] as { reason: string }).reason;
    expect(reason).toContain("f0: expected string");
    expect(reason).toContain("and 35 more");
    expect(reason.length).toBeLessThan(400);
  });
});
