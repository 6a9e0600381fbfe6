import {
  type AnswerCheck,
  type AnsweredBy,
  answerCheckSchema,
  answeredBySchema,
  type JsonValue,
  type RunEnv,
  type RunRecord,
  type RunStatus,
  runEnvSchema,
  type TerminalFact,
  type TerminalFacts,
} from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import type { RunRow } from "./rows.js";

/**
 * The readers of what a run saved in its blobs: its input, final output, error, presentation
 * instructions, the checkpoint it waits at, and the terminal facts of it and its ancestors.
 */

export function requireRun(ctx: StoreContext, runId: string): RunRow {
  const row = ctx.getRunRow(runId);
  if (!row) throw new StoreError("not_found", `No run ${runId}.`);
  return row;
}

/** A run's input: the saved JSON, or `cleared` once its launch ended before it ran. */
export type RunInput = { kind: "saved"; value: JsonValue } | { kind: "cleared" };

/** The run's input, always JSON, or the fact that it was cleared. */
export function readRunInput(ctx: StoreContext, runId: string): RunInput {
  return ctx.read(() => {
    const hash = requireRun(ctx, runId).input_hash;
    return hash === null ? { kind: "cleared" } : { kind: "saved", value: ctx.readJsonBlob(hash) };
  });
}

/**
 * The environment the run's commands start from (its starting client's), or null when none was saved
 * or it was cleared. Private: only the worker that runs the run gets it, never a view or a log.
 */
export function readRunEnv(ctx: StoreContext, runId: string): RunEnv | null {
  return ctx.read(() => {
    const hash = requireRun(ctx, runId).env_hash;
    if (hash === null) return null;
    const parsed = runEnvSchema.safeParse(ctx.readJsonBlob(hash));
    if (!parsed.success)
      throw new StoreError("invalid_record", `Run ${runId} has an unreadable environment.`);
    return parsed.data;
  });
}

/** The final output of a completed run (JSON), or null while it has none. */
export function readRunFinalOutput(ctx: StoreContext, runId: string): JsonValue | null {
  return ctx.read(() => {
    const row = requireRun(ctx, runId);
    return row.final_output_hash === null ? null : ctx.readJsonBlob(row.final_output_hash);
  });
}

/** The saved error of a failed run: always text, never parsed as JSON (the typed-readers rule). */
export function readRunError(ctx: StoreContext, runId: string): { code: string; message: string } | null {
  return ctx.read(() => {
    const row = requireRun(ctx, runId);
    if (row.error_code === null || row.error_hash === null) return null;
    return { code: row.error_code, message: ctx.readTextBlob(row.error_hash) };
  });
}

/** The workflow's presentation instructions (text), if it has any. */
export function readPresentationInstructions(ctx: StoreContext, runId: string): string | null {
  return ctx.read(() => {
    const row = requireRun(ctx, runId);
    return row.presentation_hash === null ? null : ctx.readTextBlob(row.presentation_hash);
  });
}

/** The checkpoint a run waits at, as the waiting state saved it. */
export interface WaitingCheckpoint {
  path: string;
  visit: number;
  prompt: string;
  /** Who may answer; `human` for a run saved before this was recorded. */
  answeredBy: AnsweredBy;
  /** The answer's JSON Schema as people and the model see it; null when none was saved. */
  answerSchema: Record<string, JsonValue> | null;
  /** What the host may check of an answer. */
  answerCheck: AnswerCheck;
  /** An approval gate's deadline and the default the host then takes; null without one. */
  timeout: { at: number; answer: JsonValue } | null;
}

/**
 * The checkpoint a waiting run stopped at, with who may answer it and what the host may check of an
 * answer, saved with the waiting state; null when the run is not waiting at a checkpoint.
 */
export function readAnswerCheck(ctx: StoreContext, runId: string): WaitingCheckpoint | null {
  return ctx.read(() => {
    const row = requireRun(ctx, runId);
    if (row.outcome !== "waiting" || row.final_output_hash === null) return null;
    return waitingCheckpointOf(ctx, row.final_output_hash);
  });
}

/** The waiting state saved in the run's final-output blob (see `endingColumns`). */
function waitingCheckpointOf(ctx: StoreContext, hash: string): WaitingCheckpoint {
  const saved = ctx.readJsonBlob(hash) as {
    checkpoint: { path: string; visit: number; prompt: string; answeredBy?: unknown; answerSchema?: unknown };
    answerCheck?: unknown;
    timeout?: { at?: unknown; answer?: JsonValue };
  };
  const at = saved.timeout?.at;
  const check = answerCheckSchema.safeParse(saved.answerCheck);
  const answeredBy = answeredBySchema.safeParse(saved.checkpoint.answeredBy ?? "human");
  const schema = saved.checkpoint.answerSchema;
  return {
    path: saved.checkpoint.path,
    visit: saved.checkpoint.visit,
    prompt: saved.checkpoint.prompt,
    answeredBy: answeredBy.success ? answeredBy.data : "human",
    answerSchema:
      typeof schema === "object" && schema !== null && !Array.isArray(schema)
        ? (schema as Record<string, JsonValue>)
        : null,
    answerCheck: check.success
      ? check.data
      : { kind: "worker_only", reason: "no answer schema was saved with this checkpoint" },
    timeout:
      typeof at === "number" && saved.timeout?.answer !== undefined
        ? { at, answer: saved.timeout.answer }
        : null,
  };
}

function terminalFact(ctx: StoreContext, row: RunRow): TerminalFact | null {
  const base = { runId: row.run_id, workflowName: row.workflow_name };
  switch (row.outcome) {
    case null:
      return null;
    case "completed":
      return {
        ...base,
        outcome: "completed",
        output: row.final_output_hash === null ? null : ctx.readJsonBlob(row.final_output_hash),
      };
    case "waiting": {
      const { path, visit, prompt, answeredBy, answerSchema } = waitingCheckpointOf(
        ctx,
        row.final_output_hash ?? "",
      );
      return { ...base, outcome: "waiting", checkpoint: { path, visit, prompt, answeredBy, answerSchema } };
    }
    case "failed":
    case "timed_out":
      return {
        ...base,
        outcome: row.outcome,
        error: {
          code: (row.error_code ?? "internal_error") as NonNullable<RunRecord["errorCode"]>,
          message: row.error_hash === null ? "" : ctx.readTextBlob(row.error_hash),
        },
        duringLaunch: row.step_count === 0,
      };
    case "cancelled":
      return { ...base, outcome: "cancelled" };
    default:
      return row.outcome satisfies never;
  }
}

/** Typed terminal facts of a run and of every ancestor; `not_terminal` while the run is live. */
export function readTerminalFacts(
  ctx: StoreContext,
  runId: string,
): { kind: "terminal"; facts: TerminalFacts } | { kind: "not_terminal"; status: RunStatus } {
  return ctx.read(() => {
    const row = requireRun(ctx, runId);
    const own = terminalFact(ctx, row);
    if (!own || row.terminal_fingerprint === null) return { kind: "not_terminal", status: row.status };
    const ancestors: TerminalFact[] = [];
    let parentId = row.parent_run_id;
    while (parentId !== null) {
      const parent = requireRun(ctx, parentId);
      const fact = terminalFact(ctx, parent);
      if (fact) ancestors.push(fact);
      parentId = parent.parent_run_id;
    }
    return { kind: "terminal", facts: { run: own, fingerprint: row.terminal_fingerprint, ancestors } };
  });
}
