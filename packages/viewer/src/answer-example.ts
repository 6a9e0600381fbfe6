import type { CheckpointView, JsonValue } from "@piw/protocol";

type Schema = Record<string, unknown>;

/** Deeper than any answer a person types; a recursive schema stops here with its smallest value. */
const MAX_DEPTH = 8;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function exampleString(node: Schema): string {
  const min = numberOf(node.minLength) ?? 0;
  const max = numberOf(node.maxLength);
  const word = "text".padEnd(min, "x");
  return max === undefined ? word : word.slice(0, Math.max(min, max));
}

function exampleNumber(node: Schema, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let value = numberOf(node.minimum) ?? 0;
  const above = numberOf(node.exclusiveMinimum);
  if (above !== undefined && value <= above) value = above + step;
  const max = numberOf(node.maximum);
  const below = numberOf(node.exclusiveMaximum);
  if (max !== undefined && value > max) value = max;
  if (below !== undefined && value >= below) value = below - step;
  const multiple = numberOf(node.multipleOf);
  if (multiple !== undefined && multiple > 0) value = Math.ceil(value / multiple) * multiple;
  return integer ? Math.ceil(value) : value;
}

function exampleOfType(type: string, node: Schema, root: Schema, depth: number): JsonValue {
  switch (type) {
    case "object": {
      const properties = isSchema(node.properties) ? node.properties : {};
      const required = Array.isArray(node.required) ? node.required : [];
      const out: Record<string, JsonValue> = {};
      for (const key of required) {
        if (typeof key === "string") out[key] = exampleOf(properties[key], root, depth + 1);
      }
      return out;
    }
    case "array": {
      const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : [];
      const items = prefix.map((item) => exampleOf(item, root, depth + 1));
      const min = numberOf(node.minItems) ?? 0;
      while (items.length < min) items.push(exampleOf(node.items, root, depth + 1));
      return items;
    }
    case "string":
      return exampleString(node);
    case "integer":
      return exampleNumber(node, true);
    case "number":
      return exampleNumber(node, false);
    case "boolean":
      return true;
    default:
      return null;
  }
}

function exampleOf(raw: unknown, root: Schema, depth: number): JsonValue {
  if (!isSchema(raw) || depth > MAX_DEPTH) return null;
  const node = raw.$ref === "#" ? root : raw;
  if ("const" in node) return node.const as JsonValue;
  if ("default" in node) return node.default as JsonValue;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0] as JsonValue;
  for (const key of ["oneOf", "anyOf", "allOf"]) {
    const options = node[key];
    if (Array.isArray(options) && options.length > 0) return exampleOf(options[0], root, depth + 1);
  }
  const types = Array.isArray(node.type) ? node.type : [node.type];
  const type = types.find((t): t is string => typeof t === "string" && t !== "null") ?? types[0];
  if (typeof type !== "string") return null;
  return exampleOfType(type, node, root, depth);
}

/**
 * A value that fits an answer's JSON Schema, for the `answer it with:` hints: the smallest one that
 * fills every required field, honouring const, enum, defaults, lengths and bounds. Patterns and
 * formats are not read, so a schema with one may need the example edited; undefined without a schema.
 */
export function answerExample(schema: Record<string, JsonValue> | null | undefined): JsonValue | undefined {
  if (!schema) return undefined;
  return exampleOf(schema, schema, 0);
}

/** Who may answer, in words. */
export const ANSWERED_BY_WORDS: Readonly<Record<CheckpointView["answeredBy"], string>> = {
  human: "a person",
  model: "the model",
  either: "a person or the model",
};

/** The example answer as a shell-quoted JSON argument: `'{"approved":true}'`. */
export function quotedExample(checkpoint: Pick<CheckpointView, "answerSchema">): string {
  const example = answerExample(checkpoint.answerSchema);
  if (example === undefined) return "'<json>'";
  return `'${JSON.stringify(example).replaceAll("'", "'\\''")}'`;
}
