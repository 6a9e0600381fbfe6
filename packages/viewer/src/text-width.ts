import { realpathSync } from "node:fs";
import { createRequire } from "node:module";

type TuiText = typeof import("@earendil-works/pi-tui/dist/utils.js");
let tuiText: TuiText | undefined;

/**
 * pi-tui's text utilities, loaded on first use: they build their Unicode tables as they load (30–70 ms),
 * and pi-tui's index would load the whole TUI and a markdown parser besides. `piw run` prints its follow
 * lines through modules that import this file and most of its runs measure no text.
 */
function tui(): TuiText {
  if (tuiText === undefined) {
    const require = createRequire(import.meta.url);
    // Loaded from its real path: a loader that keeps symlinked paths (Pi's extension loader, the test
    // runner) would look for pi-tui's own dependencies beside pnpm's symlink, where they are not.
    const path = realpathSync(require.resolve("@earendil-works/pi-tui/dist/utils.js"));
    tuiText = require(path) as TuiText;
  }
  return tuiText;
}

const ESCAPE = "\u001b";
// SGR and other CSI sequences, which pi-tui adds around the ellipsis when it cuts a line.
const CSI = new RegExp(`${ESCAPE}\\[[0-9;?]*[A-Za-z]`, "g");

/**
 * Cuts a line to `width` columns with an ellipsis. Plain text stays plain: pi-tui resets styles
 * around the ellipsis, which only makes sense when the line was styled in the first place.
 */
export function clipToWidth(text: string, width: number, ellipsis = "…"): string {
  if (tui().visibleWidth(text) <= width) return text;
  const cut = tui().truncateToWidth(text, Math.max(0, width), ellipsis);
  return text.includes(ESCAPE) ? cut : cut.replace(CSI, "");
}

/**
 * Columns of a line of plain text, as pi-tui's `visibleWidth` counts them. A card's lines are a glyph
 * and printable ASCII joined by spaces, and a graph of a thousand cards has a thousand distinct
 * lines, more than pi-tui's width cache holds: printable ASCII is counted, and each word holding
 * anything else is measured alone (the few glyphs stay cached). No grapheme spans a space, so the
 * sum is exact.
 */
export function textWidth(text: string): number {
  const end = text.length;
  let width = 0;
  let i = 0;
  while (i < end) {
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e) {
      width += 1;
      i += 1;
      continue;
    }
    let from = i;
    while (from > 0 && text.charCodeAt(from - 1) !== 0x20) from -= 1;
    let to = i + 1;
    while (to < end && text.charCodeAt(to) !== 0x20) to += 1;
    // The word's printable ASCII before `i` was counted already.
    width += tui().visibleWidth(text.slice(from, to)) - (i - from);
    i = to;
  }
  return width;
}
