import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal values always give equal text and equal hashes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      sorted[k] = (v as Record<string, unknown>)[k];
    }
    return sorted;
  });
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The fingerprint of a request: equal requests compare equal, whatever their key order. */
export function fingerprint(value: unknown): string {
  return sha256(canonicalJson(value));
}
