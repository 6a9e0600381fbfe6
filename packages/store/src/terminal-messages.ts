import {
  asSentence,
  type MessageKind,
  type ModelNotices,
  runMessageId,
  type TerminalFact,
} from "@piw/protocol";
import type { RunRow } from "./rows.js";

// The messages a run's end leaves for its Pi session, written from its saved terminal facts.

/** A message to insert into the outbox (the run and session come from the run's row). */
export interface NewMessage {
  messageId: string;
  kind: MessageKind;
  path: string | null;
  visit: number | null;
  body: string;
  triggerTurn: boolean;
}

const MAX_PRESENTED_OUTPUT = 16 * 1024;

/** The waiting message's last line: who answers the checkpoint, and how. */
function whoAnswers(
  runId: string,
  checkpoint: Extract<TerminalFact, { outcome: "waiting" }>["checkpoint"],
): string {
  if (checkpoint.answeredBy === "human") {
    return `A person answers this checkpoint (/workflow answer ${runId} <json>, or piw answer); the workflow tool cannot answer it.`;
  }
  const call = `the workflow tool with {"action":"answer","runId":"${runId}","answer":<the answer>}`;
  const schema =
    checkpoint.answerSchema === null
      ? ""
      : ` The answer must match this JSON Schema: ${JSON.stringify(checkpoint.answerSchema)}`;
  return checkpoint.answeredBy === "model"
    ? `Answer this checkpoint with ${call}.${schema}`
    : `A person or you may answer this checkpoint; to answer it yourself, call ${call}.${schema}`;
}

/** What the run's end tells the model that started it, in a follow-up turn (both off otherwise). */
function modelNotices(row: RunRow): ModelNotices {
  return { onFailure: row.notify_model_failure === 1, onCancel: row.notify_model_cancel === 1 };
}

const FOLLOW_UP =
  " You started this run: tell the user what happened; start it again only if the cause is fixed or they ask you to.";

export function terminalMessages(run: TerminalFact, instructions: string | null, row: RunRow): NewMessage[] {
  const notify = modelNotices(row);
  const name = `Workflow ${run.workflowName}`;
  const id = `(run ${run.runId})`;
  const base = { path: null, visit: null };
  switch (run.outcome) {
    case "failed":
    case "timed_out":
      if (run.duringLaunch) {
        return [
          {
            ...base,
            messageId: runMessageId(run.runId, "launch_failure"),
            kind: "launch_failure",
            triggerTurn: true,
            body: `${name} failed to start ${id}: ${asSentence(run.error.message)} Inspect the error and call workflow start again only after you correct the cause.`,
          },
        ];
      }
      return [
        {
          ...base,
          messageId: runMessageId(run.runId, "terminal"),
          kind: "terminal",
          triggerTurn: notify.onFailure,
          body: `${name} ${run.outcome === "timed_out" ? "timed out" : "failed"} ${id}: [${run.error.code}] ${run.error.message}${notify.onFailure ? FOLLOW_UP : ""}`,
        },
      ];
    case "cancelled":
      return [
        {
          ...base,
          messageId: runMessageId(run.runId, "terminal"),
          kind: "terminal",
          triggerTurn: notify.onCancel,
          body: notify.onCancel
            ? `${name} was cancelled by the user ${id}.${FOLLOW_UP}`
            : `${name} was cancelled ${id}.`,
        },
      ];
    case "waiting":
      return [
        {
          ...base,
          messageId: runMessageId(run.runId, "terminal"),
          kind: "terminal",
          // A checkpoint only the model answers needs a turn to be answered in.
          triggerTurn: run.checkpoint.answeredBy === "model",
          body: `${name} is waiting at checkpoint ${run.checkpoint.path} ${id}: ${run.checkpoint.prompt}\n\n${whoAnswers(run.runId, run.checkpoint)}`,
        },
      ];
    case "completed": {
      const done: NewMessage = {
        ...base,
        messageId: runMessageId(run.runId, "terminal"),
        kind: "terminal",
        triggerTurn: false,
        body: `${name} completed ${id}.`,
      };
      if (instructions === null) return [done];
      let output = JSON.stringify(run.output, null, 2) ?? "null";
      if (output.length > MAX_PRESENTED_OUTPUT)
        output = `${output.slice(0, MAX_PRESENTED_OUTPUT)}\n…(truncated)`;
      return [
        done,
        {
          ...base,
          messageId: runMessageId(run.runId, "presentation"),
          kind: "presentation",
          triggerTurn: true,
          body: `${name} finished ${id}. ${instructions}\n\nFinal output:\n${output}`,
        },
      ];
    }
    default:
      return run satisfies never;
  }
}
