import { ANSWER_SCHEMA_MAX_BYTES, type JsonValue } from "@piw/protocol";
import { type core, type ZodType, z } from "zod";

/** A JSON Schema as plain JSON: what a step contract shows and a checkpoint's view carries. */
export type JsonSchema = Record<string, JsonValue>;

/** The largest JSON Schema a step contract or a checkpoint carries. */
const JSON_SCHEMA_MAX_BYTES = ANSWER_SCHEMA_MAX_BYTES;

/** What is said for a part JSON Schema cannot express: the workflow's own schema still checks it. */
export const UNREPRESENTABLE_NOTE = "any JSON value; the workflow checks it when you submit";

/**
 * zod types whose values JSON cannot carry at all: a submitted or typed JSON value never parses as
 * one, so a schema that needs one uncoerced can never be satisfied.
 */
const NOT_JSON: Readonly<Record<string, string>> = {
  date: "a Date (use z.iso.datetime() or z.coerce.date())",
  bigint: "a BigInt (use z.number().int() or z.coerce.bigint())",
  map: "a Map (use z.record())",
  set: "a Set (use z.array())",
  symbol: "a Symbol",
  function: "a function",
  promise: "a Promise",
  nan: "NaN",
};

/** zod types that JSON Schema cannot say; they are shown as any value (UNREPRESENTABLE_NOTE). */
const UNSAID = new Set(["custom", "transform", "date", "bigint", "undefined", "void"]);

const SAFE_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** zod writes every integer's safe-integer bounds: noise in a prompt, and implied by JSON numbers. */
function dropSafeBounds(node: Record<string, unknown>): void {
  if (node.type !== "integer") return;
  for (const key of ["minimum", "maximum"]) {
    if (typeof node[key] === "number" && SAFE_BOUNDS.has(node[key])) delete node[key];
  }
}

/** `too_large` is the one failure a checkpoint lives with: its answer is still checked, only not shown. */
export type JsonSchemaResult =
  | { ok: true; schema: JsonSchema }
  | { ok: false; reason: "not_json" | "too_large"; problem: string };

/**
 * The JSON Schema of what a value must look like *before* the zod schema parses it (`io: "input"`:
 * a default makes a field optional, a transform shows its input). Refinements are not part of it (the
 * zod schema still checks them); custom types and transforms are shown as any value with a note.
 * A type JSON cannot carry, uncoerced, is a problem: nothing typed or submitted could ever match.
 */
export function jsonSchemaOf(schema: ZodType, field: string): JsonSchemaResult {
  const problems: string[] = [];
  let emitted: Record<string, unknown>;
  try {
    emitted = z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
      override: ({ zodSchema, jsonSchema }) => {
        const def = zodSchema._zod.def as core.$ZodTypeDef & { coerce?: boolean };
        const notJson = NOT_JSON[def.type];
        if (notJson !== undefined && def.coerce !== true) problems.push(notJson);
        const node = jsonSchema as Record<string, unknown>;
        if (UNSAID.has(def.type) && node.description === undefined) node.description = UNREPRESENTABLE_NOTE;
        dropSafeBounds(node);
      },
    }) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: "not_json", problem: `${field} has no JSON Schema form` };
  }
  if (problems.length > 0) {
    const unique = [...new Set(problems)].slice(0, 3).join(", ");
    return { ok: false, reason: "not_json", problem: `${field} needs a value JSON cannot carry: ${unique}` };
  }
  delete emitted.$schema;
  const bytes = Buffer.byteLength(JSON.stringify(emitted));
  if (bytes > JSON_SCHEMA_MAX_BYTES) {
    return {
      ok: false,
      reason: "too_large",
      problem: `${field}'s JSON Schema is ${Math.ceil(bytes / 1024)} KiB, over the ${JSON_SCHEMA_MAX_BYTES / 1024} KiB a step carries`,
    };
  }
  return { ok: true, schema: emitted as JsonSchema };
}
