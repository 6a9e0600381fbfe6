import {
  isTerminalStatus,
  type NodeKind,
  type NodeView,
  type RunStatus,
  type TerminalOutcome,
} from "@piw/protocol";
import type { Tint } from "./theme.js";

// The words and glyphs every piw surface uses for a state: `piw status`, the Pi widget, the footer and
// the viewer say the same thing because they all read these tables. The glyphs live in glyphs.ts.

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

export function runStateWord(run: { status: RunStatus; outcome: TerminalOutcome | null }): RunStateWord {
  if (isTerminalStatus(run.status) && run.outcome !== null) return OUTCOME_WORDS[run.outcome];
  return STATUS_WORDS[run.status];
}

/**
 * A run's state as people read it: its word, except that a waiting run whose checkpoint was answered
 * names the continuation run that goes on from it.
 */
export function runStateText(run: {
  status: RunStatus;
  outcome: TerminalOutcome | null;
  continuedAs?: string | null | undefined;
}): string {
  const word = runStateWord(run);
  return word === "waiting" && run.continuedAs ? `answered → ${run.continuedAs}` : word;
}

export const RUN_TINTS: Readonly<Record<RunStateWord, Tint>> = {
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

export type NodeState = NodeView["state"];
export type NodeStateWord =
  | "pending"
  | "running"
  | "succeeded"
  | "failed"
  | "timed out"
  | "cancelled"
  | "paused";

export const NODE_STATE_WORDS: Readonly<Record<NodeState, NodeStateWord>> = {
  pending: "pending",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  timed_out: "timed out",
  cancelled: "cancelled",
  paused: "paused",
};

export const NODE_TINTS: Readonly<Record<NodeState, Tint>> = {
  pending: "dim",
  running: "cyan",
  succeeded: "green",
  failed: "red",
  timed_out: "red",
  cancelled: "yellow",
  paused: "yellow",
};

/** What a graph element is: a node kind, or an included child workflow. */
export type ElementKind = NodeKind | "include";
