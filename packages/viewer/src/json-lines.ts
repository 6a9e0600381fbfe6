import type { JsonValue } from "@piw/protocol";

export interface JsonLinesOptions {
  /** Strings longer than this are cut, saying how much is hidden. */
  maxString?: number;
  /** Arrays and objects with more entries show this many, then a count of the rest. */
  maxEntries?: number;
  /** Deeper values are folded to `{…}` / `[…]`. */
  maxDepth?: number;
}

function foldString(text: string, max: number): string {
  const shown = text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max} chars)`;
  return JSON.stringify(shown);
}

/** A JSON value pretty-printed, two spaces per level, with long values folded so it stays readable. */
export function jsonLines(value: JsonValue, options: JsonLinesOptions = {}): string[] {
  const maxString = options.maxString ?? 160;
  const maxEntries = options.maxEntries ?? 30;
  const maxDepth = options.maxDepth ?? 6;
  const lines: string[] = [];
  const walk = (item: JsonValue, indent: string, prefix: string, suffix: string, depth: number) => {
    if (item === null || typeof item !== "object") {
      lines.push(
        `${indent}${prefix}${typeof item === "string" ? foldString(item, maxString) : JSON.stringify(item)}${suffix}`,
      );
      return;
    }
    const isArray = Array.isArray(item);
    const entries: [string | null, JsonValue][] = isArray
      ? item.map((child) => [null, child])
      : Object.entries(item);
    const [open, close] = isArray ? ["[", "]"] : ["{", "}"];
    if (entries.length === 0) {
      lines.push(`${indent}${prefix}${open}${close}${suffix}`);
      return;
    }
    if (depth >= maxDepth) {
      lines.push(
        `${indent}${prefix}${open}… ${entries.length} ${isArray ? "items" : "keys"}${close}${suffix}`,
      );
      return;
    }
    lines.push(`${indent}${prefix}${open}`);
    const shown = entries.slice(0, maxEntries);
    shown.forEach(([key, child], i) => {
      const comma = i < entries.length - 1 ? "," : "";
      walk(child, `${indent}  `, key === null ? "" : `${JSON.stringify(key)}: `, comma, depth + 1);
    });
    if (entries.length > shown.length) {
      lines.push(`${indent}  … ${entries.length - shown.length} more ${isArray ? "items" : "keys"}`);
    }
    lines.push(`${indent}${close}${suffix}`);
  };
  walk(value, "", "", "", 0);
  return lines;
}
