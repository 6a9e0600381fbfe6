/**
 * The one canonical JSON text of a value, for fingerprints and digests: `JSON.stringify` with object
 * keys sorted at every level, so equal values give equal text whatever order their keys were written
 * in. Everything else is `JSON.stringify`'s own rule: `toJSON` applies first (a `Date` is its ISO
 * string), `undefined` members are dropped, and `undefined` in an array is `null`.
 * A value with no JSON text at all (`undefined`, a function) is a bug and throws.
 */
export function canonicalJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== "object" || Array.isArray(member)) return member;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(member).sort()) sorted[key] = (member as Record<string, unknown>)[key];
    return sorted;
  }) as string | undefined;
  if (text === undefined) throw new TypeError("canonicalJson: the value has no JSON text.");
  return text;
}
