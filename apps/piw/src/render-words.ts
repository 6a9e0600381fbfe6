import type { NodeView, RunStatus, TerminalOutcome } from "@piw/protocol";
import type { Style } from "./style.js";

// The words and glyphs every piw surface uses for a state. The Pi widget and the viewer must say the
// same thing, so these tables are the reference (they move to @piw/viewer when it renders runs).

/** A run's state as one word: its outcome once it has ended, else its status. */
export type RunStateWord =
  | "queued"
  | "starting"
  | "running"
  | "parked"
  | "completed"
  | "waiting"
  | "failed"
  | "timed out"
  | "cancelled";

const STATUS_WORDS: Record<RunStatus, RunStateWord> = {
  queued: "queued",
  starting: "starting",
  running: "running",
  parked: "parked",
  // A terminal status without an outcome should not happen; these are its fallbacks.
  done: "completed",
  failed: "failed",
  cancelled: "cancelled",
};

const OUTCOME_WORDS: Record<TerminalOutcome, RunStateWord> = {
  completed: "completed",
  waiting: "waiting",
  failed: "failed",
  timed_out: "timed out",
  cancelled: "cancelled",
};

const TERMINAL: ReadonlySet<RunStatus> = new Set(["done", "failed", "cancelled"]);

export function runStateWord(run: { status: RunStatus; outcome: TerminalOutcome | null }): RunStateWord {
  if (TERMINAL.has(run.status) && run.outcome !== null) return OUTCOME_WORDS[run.outcome];
  return STATUS_WORDS[run.status];
}

const RUN_GLYPHS: Record<RunStateWord, string> = {
  queued: "○",
  starting: "◌",
  running: "▶",
  parked: "‼",
  completed: "✓",
  waiting: "⏸",
  failed: "✗",
  "timed out": "⏱",
  cancelled: "■",
};

type Tint = keyof Pick<Style, "green" | "red" | "yellow" | "cyan" | "dim">;

const RUN_TINTS: Record<RunStateWord, Tint> = {
  queued: "dim",
  starting: "cyan",
  running: "cyan",
  parked: "yellow",
  completed: "green",
  waiting: "yellow",
  failed: "red",
  "timed out": "red",
  cancelled: "yellow",
};

/** `✓ completed`, coloured by what it means. */
export function runStateLabel(word: RunStateWord, style: Style): string {
  return style[RUN_TINTS[word]](`${RUN_GLYPHS[word]} ${word}`);
}

export function runGlyph(word: RunStateWord, style: Style): string {
  return style[RUN_TINTS[word]](RUN_GLYPHS[word]);
}

export type NodeStateWord = "pending" | "running" | "succeeded" | "failed" | "timed out";

export const NODE_STATE_WORDS: Record<NodeView["state"], NodeStateWord> = {
  pending: "pending",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  timed_out: "timed out",
};

const NODE_GLYPHS: Record<NodeView["state"], string> = {
  pending: "·",
  running: "▶",
  succeeded: "✓",
  failed: "✗",
  timed_out: "⏱",
};

const NODE_TINTS: Record<NodeView["state"], Tint> = {
  pending: "dim",
  running: "cyan",
  succeeded: "green",
  failed: "red",
  timed_out: "red",
};

export function nodeGlyph(state: NodeView["state"], style: Style): string {
  return style[NODE_TINTS[state]](NODE_GLYPHS[state]);
}
