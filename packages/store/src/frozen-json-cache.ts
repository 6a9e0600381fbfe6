import type { JsonValue } from "@piw/protocol";

/**
 * Parsed JSON blobs that are read again and again (a run's manifest, once per view), by blob hash. A
 * blob's content never changes under its hash, so a cached value is never stale; values are frozen
 * because every reader shares one.
 */
export class FrozenJsonCache {
  private readonly values = new Map<string, JsonValue>();

  constructor(private readonly capacity: number) {}

  /** The value under `hash`, loaded with `load` on a miss. */
  get(hash: string, load: () => JsonValue): JsonValue {
    const cached = this.values.get(hash);
    if (cached !== undefined) {
      // Most recently used last: the oldest entry is the first to go.
      this.values.delete(hash);
      this.values.set(hash, cached);
      return cached;
    }
    const value = deepFreeze(load());
    this.values.set(hash, value);
    if (this.values.size > this.capacity) {
      const oldest = this.values.keys().next();
      if (!oldest.done) this.values.delete(oldest.value);
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
