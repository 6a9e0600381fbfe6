import type { Glyphs } from "./glyphs.js";
import { clipToWidth } from "./text-width.js";
import type { Theme } from "./theme.js";
import type { OpenRun } from "./viewer-state.js";

/** The keys, as `?` lists them and docs/viewer.md shows them. */
const KEY_MAP: ReadonlyArray<{ keys: string; where: string; does: string }> = [
  { keys: "↑ ↓  k j", where: "list", does: "choose a run" },
  { keys: "enter", where: "list", does: "open the run" },
  { keys: "tab", where: "list", does: "cycle the status filter" },
  { keys: "esc", where: "list", does: "quit the viewer" },
  { keys: "↑ ↓  k j", where: "run", does: "choose a node (stops following)" },
  { keys: "← →  h l", where: "run", does: "replay: step back / forward through the recorded events" },
  { keys: "home end", where: "run", does: "replay: first event / back to live" },
  { keys: "space  p", where: "run", does: "replay: play / pause (from the first event when live)" },
  { keys: "x", where: "run", does: "replay speed: 1×, 2×, 5×, 10× events a second" },
  { keys: "1 2 3 4  tab", where: "run", does: "inspector tab: Steps, Conversation, Trace, Info" },
  { keys: "a", where: "trace", does: "the chosen node's events / every event of the run" },
  { keys: "enter  i", where: "run", does: "inspect the chosen node (scroll it with ↑ ↓); again to leave" },
  { keys: "< >", where: "run", does: "wide terminal: narrow / widen the graph beside the inspector" },
  { keys: "f", where: "run", does: "follow the active node live again" },
  { keys: "pgup pgdn  wheel", where: "run", does: "scroll the graph or the inspector" },
  { keys: "click  drag", where: "run", does: "choose a card or a tab; drag the divider to resize" },
  { keys: "esc  backspace", where: "run", does: "back to the run list" },
  { keys: "esc  backspace", where: "inspector", does: "close the inspector, back to the graph" },
  { keys: "?", where: "any", does: "show or hide this help" },
  { keys: "esc", where: "help", does: "close this help (so does any key)" },
  { keys: "q  ctrl+c", where: "any", does: "quit" },
];

export const LIST_FOOTER = "↑↓ choose  enter open  tab filter  ? help  q quit";
const RUN_FOOTER = "↑↓ node  ←→ replay  enter inspect  f follow  esc back  ? help  q quit";
const SPLIT_FOOTER =
  "↑↓ node  ←→ replay  space play  1-4 tab  enter scroll inspector  < > resize  f follow  esc back  ? help  q quit";
const INSPECTOR_FOOTER = "↑↓ pgup pgdn scroll  1-4 tab  ←→ replay  space play  esc close  ? help  q quit";

const ASCII_KEYS: Record<string, string> = {
  "↑": "up",
  "↓": "dn",
  "←": "lt",
  "→": "rt",
  "↑↓": "up/dn",
  "←→": "lt/rt",
};

/** Key names as this terminal can show them: arrows become words in ASCII. */
export function keyText(text: string, g: Glyphs): string {
  return g.ascii ? text.replace(/↑↓|←→|[↑↓←→]/g, (arrow) => ASCII_KEYS[arrow] ?? arrow) : text;
}

/** The help screen: every key, where it works and what it does. */
export function helpLines(width: number, g: Glyphs): string[] {
  const lines = ["keys", ""];
  const keyWidth = Math.max(...KEY_MAP.map((entry) => keyText(entry.keys, g).length));
  const whereWidth = Math.max(...KEY_MAP.map((entry) => entry.where.length));
  for (const entry of KEY_MAP) {
    const keys = keyText(entry.keys, g).padEnd(keyWidth);
    lines.push(`  ${keys}  ${entry.where.padEnd(whereWidth)}  ${keyText(entry.does, g)}`);
  }
  lines.push("", "any key closes this help");
  return lines.map((line) => clipToWidth(line, width, g.ellipsis));
}

/** The run screen's footer: the keys of the inspector, the split layout or the graph alone. */
export function footerOf(run: OpenRun, split: boolean, g: Glyphs, theme: Theme): string {
  const text = run.inspector ? INSPECTOR_FOOTER : split ? SPLIT_FOOTER : RUN_FOOTER;
  return theme("dim", keyText(text, g));
}
