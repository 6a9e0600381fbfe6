/** The colours a renderer may ask for; each surface maps them to its own styling. */
export type Tint = "green" | "red" | "yellow" | "cyan" | "dim" | "bold" | "inverse";

/** Paints text with a tint. The renderers are pure: they never decide whether colour is on. */
export type Theme = (tint: Tint, text: string) => string;

/** No colour at all: what tests, `--once` snapshots and pipes get. */
export const plainTheme: Theme = (_tint, text) => text;

const ANSI: Record<Tint, [number, number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
  inverse: [7, 27],
};

/** SGR colours for a terminal. */
export const ansiTheme: Theme = (tint, text) => {
  const [open, close] = ANSI[tint];
  return `\u001b[${open}m${text}\u001b[${close}m`;
};
