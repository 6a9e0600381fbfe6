import type { core, ZodType } from "zod";

/** The top-level keys an input schema takes, and which of them it requires. */
export interface InputKeys {
  keys: string[];
  required: string[];
}

/**
 * The keys of an object input schema that drops keys it does not know (zod's default), or undefined
 * for any other schema: a strict object refuses unknown keys itself, a loose one keeps them, and a
 * schema that is not an object has no keys to name.
 */
export function inputKeysOf(schema: ZodType): InputKeys | undefined {
  const def = schema._zod.def as core.$ZodTypeDef & {
    shape?: Record<string, core.$ZodType>;
    catchall?: core.$ZodType;
  };
  if (def.type !== "object" || def.shape === undefined || def.catchall !== undefined) return undefined;
  const keys = Object.keys(def.shape);
  // A key with a default or marked optional may be left out (zod sets `optin` for both).
  const required = keys.filter((key) => def.shape?.[key]?._zod.optin === undefined);
  return { keys, required };
}

/** The keys of `input` that the schema's keys do not have. */
export function unknownInputKeys(input: unknown, known: InputKeys): string[] {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return [];
  return Object.keys(input).filter((key) => !known.keys.includes(key));
}

/** `task (required), notes`: the keys as a person reads them. */
export function describeInputKeys(known: InputKeys): string {
  if (known.keys.length === 0) return "none";
  return known.keys.map((key) => (known.required.includes(key) ? `${key} (required)` : key)).join(", ");
}
