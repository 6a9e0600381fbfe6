import { z } from "zod";
import { codePointLength } from "./code-points.js";

const ELLIPSIS = "…";

/**
 * `text` as one line for a short summary: every run of whitespace and control characters becomes one
 * space, the ends are trimmed, and a longer line is cut to `limit` code points, the ellipsis included.
 * A cut never splits a character, so the line stays well-formed text.
 */
export function oneLine(text: string, limit: number): string {
  // Line breaks (U+2028 and U+2029 included), other whitespace and control characters, in runs.
  const flat = text.replace(/[\s\p{Cc}]+/gu, " ").trim();
  let count = 0;
  let end = 0;
  let keep = 0;
  for (const ch of flat) {
    if (count === limit - 1) keep = end;
    count += 1;
    end += ch.length;
    if (count > limit) return `${flat.slice(0, keep)}${ELLIPSIS}`;
  }
  return flat;
}

/** A string of at most `max` code points, the bound `oneLine` cuts to. */
export function oneLineSchema(max: number) {
  // Two UTF-16 units per code point at most: the cheap check first, so a huge string is not walked.
  return z
    .string()
    .max(max * 2)
    .refine((text) => codePointLength(text) <= max, `at most ${max} characters`);
}
