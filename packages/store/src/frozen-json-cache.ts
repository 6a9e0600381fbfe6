import type { JsonValue } from "@piw/protocol";

/**
 * Parsed JSON blobs that are read again and again (a run's manifest, once per view), by blob hash. A
 * blob's content never changes under its hash, so a cached value is never stale; values are frozen
 * because every reader shares one. Bounded by the JSON text's total length, not by count.
 */
export class FrozenJsonCache {
  private readonly values = new Map<string, { value: JsonValue; length: number }>();
  private length = 0;

  constructor(private readonly maxLength: number) {}

  /** The value under `hash`, parsed from `readText()` on a miss. */
  get(hash: string, readText: () => string): JsonValue {
    const cached = this.values.get(hash);
    if (cached !== undefined) {
      // Most recently used last: the oldest entry is the first to go.
      this.values.delete(hash);
      this.values.set(hash, cached);
      return cached.value;
    }
    const text = readText();
    const value = deepFreeze(JSON.parse(text) as JsonValue);
    // A value larger than the whole cache is not kept: it would only push every other one out.
    if (text.length > this.maxLength) return value;
    this.values.set(hash, { value, length: text.length });
    this.length += text.length;
    for (const [oldest, entry] of this.values) {
      if (this.length <= this.maxLength) break;
      this.values.delete(oldest);
      this.length -= entry.length;
    }
    return value;
  }
}

/** Freezes in place; the type stays JsonValue, whose readers here only read. */
function deepFreeze(value: JsonValue): JsonValue {
  if (typeof value !== "object" || value === null) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  Object.freeze(value);
  return value;
}
