import type { MessageKind } from "./run-records.js";

// Deterministic message IDs, derived from what the message is about and never counted from history:
// a retry after a crash finds the same message instead of creating another. The engine names the
// messages of a node visit, the store those about a run's end; both spell them here.

/** A message about one node visit: `msg:<runId>:<path>:<visit>:<kind>`. */
export function visitMessageId(visit: { runId: string; path: string; visit: number }, kind: string): string {
  return `msg:${visit.runId}:${visit.path}:${visit.visit}:${kind}`;
}

/**
 * The suffix of a reminder about an open agent step: a `nudge` after a turn that ended without a
 * submit, a `retry` after a lost turn; `n` counts them within the attempt.
 */
export function reminderKind(reason: "nudge" | "retry", attempt: number, n: number): string {
  return `${reason}:${attempt}:${n}`;
}

/** Whether a visit message ID names a reminder (see `reminderKind`). */
export function isReminderMessageId(messageId: string): boolean {
  return /:(nudge|retry):\d+:\d+$/.test(messageId);
}

/** The message about a run's end (its launch failure, terminal report or presentation): `msg:<runId>:<kind>`. */
export function runMessageId(
  runId: string,
  kind: Extract<MessageKind, "launch_failure" | "terminal" | "presentation">,
): string {
  return `msg:${runId}:${kind}`;
}
