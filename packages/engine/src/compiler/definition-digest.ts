import { createHash } from "node:crypto";
import { type ZodType, z } from "zod";

/**
 * JSON with object keys sorted at every level and `undefined` members dropped: two equal values always
 * give the same text, whatever order their keys were written in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) sorted[key] = sortKeys(member);
  }
  return sorted;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * A schema's JSON Schema, for digests: what it accepts is part of the definition. Transforms and other
 * parts JSON Schema cannot express are kept as `{}` rather than failing the compile.
 */
export function schemaJson(schema: ZodType | undefined): unknown {
  if (schema === undefined) return undefined;
  try {
    return z.toJSONSchema(schema, { unrepresentable: "any", io: "input" });
  } catch {
    return { unrepresentable: true };
  }
}
