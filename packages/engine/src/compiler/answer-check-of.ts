import { ANSWER_SCHEMA_MAX_BYTES, type AnswerCheck, type JsonValue } from "@piw/protocol";
import { type core, type ZodType, z } from "zod";

/**
 * Why the JSON form of a zod node may refuse a value the node itself accepts, or undefined when it
 * cannot. JSON Schema describes what a value looks like before parsing; these parts change the value
 * first (coerce, preprocess, trim, catch) or lose a regex's flags, so the JSON form would be stricter.
 */
function stricterThanZod(schema: core.$ZodType): string | undefined {
  const def = schema._zod.def as core.$ZodTypeDef & { coerce?: boolean; in?: core.$ZodType };
  if (def.coerce === true) return "it coerces a value";
  if (def.type === "catch") return "it has a catch";
  if (def.type === "pipe" && def.in?._zod.traits.has("$ZodTransform")) return "it preprocesses a value";
  for (const check of [schema, ...(def.checks ?? [])]) {
    const checkDef = check._zod.def as { check?: string; pattern?: unknown };
    if (checkDef.check === "overwrite") return "it rewrites a string before checking it";
    const pattern = checkDef.pattern;
    if (pattern instanceof RegExp && pattern.flags !== "") return "a pattern has regex flags";
  }
  return undefined;
}

/**
 * zod checks a string format with more than its pattern, and its JSON Schema reader with another
 * implementation of the named format: keep only what both agree on, the pattern (none for base64,
 * whose emitted pattern is stricter than zod's own check).
 */
function looserFormats(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) looserFormats(item);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const node = value as Record<string, unknown>;
  if (node.type === "string") {
    if (typeof node.format === "string") delete node.format;
    if (typeof node.contentEncoding === "string") {
      delete node.contentEncoding;
      delete node.pattern;
    }
  }
  for (const member of Object.values(node)) looserFormats(member);
}

/**
 * The host's check of a checkpoint's answer, made once at compile time: the answer schema as JSON
 * Schema when that never refuses an answer the schema accepts, otherwise `worker_only`. Refinements
 * and other parts JSON Schema cannot say become "anything", so the host may accept an answer the
 * worker later rejects; the continuation then fails with `answer_invalid` and the checkpoint stays
 * open for another answer.
 */
export function answerCheckOf(schema: ZodType): AnswerCheck {
  let stricter: string | undefined;
  let emitted: Record<string, unknown>;
  try {
    emitted = z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
      override: ({ zodSchema }) => {
        stricter ??= stricterThanZod(zodSchema);
      },
    }) as Record<string, unknown>;
  } catch {
    return { kind: "worker_only", reason: "the answer schema has no JSON Schema form" };
  }
  if (stricter) return { kind: "worker_only", reason: `the host cannot check this answer: ${stricter}` };
  looserFormats(emitted);
  if (Buffer.byteLength(JSON.stringify(emitted)) > ANSWER_SCHEMA_MAX_BYTES) {
    return { kind: "worker_only", reason: "the answer schema is too large for the host to check" };
  }
  try {
    z.fromJSONSchema(emitted as core.JSONSchema.JSONSchema);
  } catch {
    return { kind: "worker_only", reason: "the answer schema uses JSON Schema the host cannot read" };
  }
  return { kind: "json_schema", schema: emitted as Record<string, JsonValue> };
}
