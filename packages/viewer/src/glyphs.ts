import type { ElementKind, NodeState, RunStateWord } from "./words.js";
import { PIW_ENV } from "@piw/state-dir";

/**
 * Every symbol the viewer and the widget draw, in one table per character set. A terminal whose font
 * or locale cannot show the Unicode set gets the ASCII one, with the same meaning in the same place.
 */
export interface Glyphs {
  ascii: boolean;
  run: Readonly<Record<RunStateWord, string>>;
  node: Readonly<Record<NodeState, string>>;
  kind: Readonly<Record<ElementKind, string>>;
  light: BoxGlyphs;
  heavy: BoxGlyphs;
  /** Edge lines and their crossing. */
  horizontal: string;
  vertical: string;
  cross: string;
  /** Where a line meets a crossing one and ends: from above, from the left, from the right. */
  junctions: { up: string; left: string; right: string };
  /** Lane corners: top-right, bottom-right, bottom-left, top-left. */
  corners: { tr: string; br: string; bl: string; tl: string };
  /** Arrowheads of an edge the run took, and of one it never took. */
  arrows: { down: string; left: string; right: string };
  untakenArrows: { down: string; left: string; right: string };
  exit: string;
  live: string;
  replay: string;
  chosen: string;
  ellipsis: string;
  more: string;
  /** A parallel node's branches under it: every branch but the last, and the last. */
  tree: { mid: string; last: string };
  dot: string;
  /** The split layout's divider. */
  divider: string;
  /** A bar: full cell, the partial cells from 1/8 to 7/8, and the empty rest of a progress bar. */
  bar: { full: string; partial: readonly string[]; track: string };
}

interface BoxGlyphs {
  tl: string;
  tr: string;
  bl: string;
  br: string;
  h: string;
  v: string;
  down: string;
}

export const UNICODE_GLYPHS: Glyphs = {
  ascii: false,
  run: {
    queued: "○",
    starting: "◌",
    running: "▶",
    parked: "‼",
    completed: "✓",
    waiting: "⏸",
    failed: "✗",
    "timed out": "⏱",
    cancelled: "■",
  },
  node: {
    pending: "·",
    running: "▶",
    succeeded: "✓",
    failed: "✗",
    timed_out: "⏱",
    cancelled: "■",
    paused: "⏸",
  },
  kind: {
    agent: "✦",
    compute: "λ",
    shell: "$",
    action: "⚙",
    notify: "✉",
    checkpoint: "⚑",
    decision: "◇",
    wait: "◷",
    parallel: "⫴",
    map: "⋔",
    include: "⧉",
  },
  light: { tl: "╭", tr: "╮", bl: "╰", br: "╯", h: "─", v: "│", down: "┬" },
  heavy: { tl: "┏", tr: "┓", bl: "┗", br: "┛", h: "━", v: "┃", down: "┰" },
  horizontal: "─",
  vertical: "│",
  cross: "┼",
  junctions: { up: "┴", left: "┤", right: "├" },
  corners: { tr: "╮", br: "╯", bl: "╰", tl: "╭" },
  arrows: { down: "▼", left: "◀", right: "▶" },
  untakenArrows: { down: "▽", left: "◁", right: "▷" },
  exit: "◎",
  live: "●",
  replay: "◀",
  chosen: "›",
  ellipsis: "…",
  more: "⋮",
  tree: { mid: "├", last: "└" },
  dot: "·",
  divider: "│",
  bar: { full: "█", partial: ["▏", "▎", "▍", "▌", "▋", "▊", "▉"], track: "░" },
};

export const ASCII_GLYPHS: Glyphs = {
  ascii: true,
  run: {
    queued: "o",
    starting: "~",
    running: ">",
    parked: "!",
    completed: "v",
    waiting: "=",
    failed: "x",
    "timed out": "T",
    cancelled: "#",
  },
  node: {
    pending: ".",
    running: ">",
    succeeded: "v",
    failed: "x",
    timed_out: "T",
    cancelled: "#",
    paused: "=",
  },
  kind: {
    agent: "*",
    compute: "f",
    shell: "$",
    action: "@",
    notify: "m",
    checkpoint: "P",
    decision: "?",
    wait: "w",
    parallel: "=",
    map: "%",
    include: "+",
  },
  light: { tl: "+", tr: "+", bl: "+", br: "+", h: "-", v: "|", down: "+" },
  heavy: { tl: "#", tr: "#", bl: "#", br: "#", h: "=", v: "#", down: "#" },
  horizontal: "-",
  vertical: "|",
  cross: "+",
  junctions: { up: "+", left: "+", right: "+" },
  corners: { tr: "+", br: "+", bl: "+", tl: "+" },
  arrows: { down: "v", left: "<", right: ">" },
  untakenArrows: { down: ":", left: ":", right: ":" },
  exit: "@",
  live: "*",
  replay: "<",
  chosen: ">",
  ellipsis: "~",
  more: ":",
  tree: { mid: "+", last: "`" },
  dot: "-",
  divider: "|",
  bar: { full: "#", partial: [], track: "-" },
};

/** The Unicode glyphs by name, for surfaces that always draw Unicode (`piw status`). */
export const RUN_GLYPHS: Readonly<Record<RunStateWord, string>> = UNICODE_GLYPHS.run;
export const NODE_GLYPHS: Readonly<Record<NodeState, string>> = UNICODE_GLYPHS.node;

/**
 * Which set this terminal can show. `PIW_ASCII=1` forces ASCII and `PIW_ASCII=0` Unicode; otherwise
 * the Linux console, or a locale that does not say UTF-8, gets ASCII.
 */
export function detectGlyphs(env: Readonly<Record<string, string | undefined>> = process.env): Glyphs {
  const forced = env[PIW_ENV.ascii.name];
  if (forced === "1") return ASCII_GLYPHS;
  if (forced === "0") return UNICODE_GLYPHS;
  if (env.TERM === "linux") return ASCII_GLYPHS;
  // The first locale variable that is set decides, as the C library decides.
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  if (locale !== undefined && locale !== "" && !/utf-?8/i.test(locale)) return ASCII_GLYPHS;
  return UNICODE_GLYPHS;
}
