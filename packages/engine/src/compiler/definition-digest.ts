import { createHash } from "node:crypto";
import { type ZodType, z } from "zod";

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
