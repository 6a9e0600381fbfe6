import type { Glyphs } from "./glyphs.js";

/**
 * The filled part of a bar `width` columns long at `fraction` (0 to 1), in eighths of a cell where
 * the glyphs have them; ASCII rounds half a cell up to a whole one.
 */
export function filledBar(fraction: number, width: number, g: Glyphs): string {
  const clamped = Math.min(1, Math.max(0, fraction));
  const eighths = Math.round(clamped * width * 8);
  const full = Math.floor(eighths / 8);
  const rest = eighths % 8;
  const partial = rest > 0 ? (g.bar.partial[rest - 1] ?? (rest >= 4 ? g.bar.full : "")) : "";
  return g.bar.full.repeat(full) + partial;
}
