import { isReminderMessageId, type MessageKind, oneLine } from "@piw/protocol";

/** What a card says about one piw message: all of it from the message's own details. */
export interface MessageCardFacts {
  piwMessageId?: string;
  kind: MessageKind;
  runId: string;
  path: string | null;
  visit?: number | null;
  workflow?: string;
  /** The run's state word when the message was delivered (`running`, `failed`, …). */
  state?: string;
}

const KIND_LABELS: Readonly<Record<MessageKind, string>> = {
  step_prompt: "step",
  notify: "notice",
  launch_failure: "launch failed",
  terminal: "run",
  presentation: "result",
};

const MAX_SUMMARY = 240;

/** The message's first non-empty line, whitespace collapsed and bounded. */
export function messageSummary(body: string): string {
  const first = body.split("\n").find((line) => line.trim().length > 0) ?? "";
  return oneLine(first, MAX_SUMMARY);
}

/**
 * The card's one line: what kind of message, which workflow, run, step and state, then the start of
 * the text, e.g. `piw step · loop · run loop-… · work #1 · running · LOOP-STEP: work on it…`.
 */
export function messageCardLine(facts: MessageCardFacts, body: string): string {
  const reminder = facts.kind === "step_prompt" && isReminderMessageId(facts.piwMessageId ?? "");
  const parts = [`piw ${reminder ? "reminder" : KIND_LABELS[facts.kind]}`];
  if (facts.workflow !== undefined) parts.push(facts.workflow);
  parts.push(`run ${facts.runId}`);
  if (facts.path !== null) {
    parts.push(
      facts.visit === undefined || facts.visit === null ? facts.path : `${facts.path} #${facts.visit}`,
    );
  }
  if (facts.state !== undefined) parts.push(facts.state);
  const summary = messageSummary(body);
  if (summary.length > 0) parts.push(summary);
  return parts.join(" · ");
}
