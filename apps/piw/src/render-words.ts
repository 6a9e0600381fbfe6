import type { NodeView } from "@piw/protocol";
import { NODE_GLYPHS, NODE_TINTS, RUN_GLYPHS, RUN_TINTS, type RunStateWord, type Tint } from "@piw/viewer";
import type { Style } from "./style.js";

// The words and glyphs live in @piw/viewer, so `piw status`, the Pi widget and the viewer say the same
// thing; this file only paints them with the CLI's style.

export type { RunStateWord } from "@piw/viewer";
export { NODE_STATE_WORDS, runStateText, runStateWord } from "@piw/viewer";

function paint(tint: Tint, text: string, style: Style): string {
  switch (tint) {
    case "green":
    case "red":
    case "yellow":
    case "cyan":
    case "dim":
    case "bold":
      return style[tint](text);
    case "inverse":
      return text;
    default:
      return tint satisfies never;
  }
}

/** `✓ completed`, coloured by what it means; `text` replaces the word (`answered → <run>`). */
export function runStateLabel(word: RunStateWord, style: Style, text: string = word): string {
  return paint(RUN_TINTS[word], `${RUN_GLYPHS[word]} ${text}`, style);
}

export function runGlyph(word: RunStateWord, style: Style): string {
  return paint(RUN_TINTS[word], RUN_GLYPHS[word], style);
}

export function nodeGlyph(state: NodeView["state"], style: Style): string {
  return paint(NODE_TINTS[state], NODE_GLYPHS[state], style);
}
