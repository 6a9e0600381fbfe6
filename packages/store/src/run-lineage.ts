import {
  adopted,
  type Answerer,
  applied,
  boundSafeMessage,
  checkAnswer,
  conflict,
  type Conflict,
  type JsonValue,
  mayAnswer,
  type PrepareContinuation,
  type PrepareRestart,
  type RunRecord,
  type Transition,
} from "@piw/protocol";
import { isConflict, type StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import { readAnswerCheck } from "./terminal-readers.js";
import { controllableRun } from "./run-control.js";
import { repeatedRequest, runWithRequestKey } from "./request-key.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { insertQueuedRun, updateRun } from "./run-writes.js";
import { sessionRefusal } from "./session-reservation.js";

interface ChildSpec {
  runId: string;
  parent: RunRow;
  command: "continue" | "restart";
  restartNumber: number;
  parentTerminalFingerprint: string | null;
  accepted: { path: string; visit: number; answerHash: string } | null;
  requestKey: string | null;
  /** A continuation: who answered, recorded in its `run.queued` event. */
  answeredBy?: PrepareContinuation["answerer"];
}

/**
 * Insert a queued child run that reuses the parent's approved definition, input and environment. Nothing else is
 * copied: no steps, outputs, effects, turns or messages (the clean-restart rule).
 */
function insertChild(ctx: StoreContext, spec: ChildSpec): Transition<RunRecord> {
  const { parent } = spec;
  // A launch that ended before it ran kept no input, so there is nothing to run again.
  if (parent.input_hash === null) return conflict({ kind: "input_cleared", runId: parent.run_id });
  const refusal = parent.origin_session === null ? undefined : sessionRefusal(ctx, parent.origin_session);
  if (refusal) return conflict(refusal);
  const row = insertQueuedRun(
    ctx,
    {
      run_id: spec.runId,
      root_run_id: parent.root_run_id,
      parent_run_id: parent.run_id,
      origin_command: spec.command,
      next_command: spec.command,
      restart_number: spec.restartNumber,
      parent_terminal_fingerprint: spec.parentTerminalFingerprint,
      accepted_path: spec.accepted?.path ?? null,
      accepted_visit: spec.accepted?.visit ?? null,
      accepted_answer_hash: spec.accepted?.answerHash ?? null,
      workflow_name: parent.workflow_name,
      source_json: parent.source_json,
      definition_digest: parent.definition_digest,
      manifest_hash: parent.manifest_hash,
      origin_kind: parent.origin_kind,
      origin_session: parent.origin_session,
      input_hash: parent.input_hash,
      env_hash: parent.env_hash,
      presentation_hash: parent.presentation_hash,
      notify_model_failure: parent.notify_model_failure,
      notify_model_cancel: parent.notify_model_cancel,
      working_dir: parent.working_dir,
      request_key: spec.requestKey,
    },
    spec.answeredBy,
  );
  return applied(mapRunRow(row));
}

/**
 * The parent's one child of this kind. A continuation that refused its answer (`answer_invalid`)
 * does not count: it ran nothing, and the checkpoint stays open for a corrected answer.
 */
function existingChild(
  ctx: StoreContext,
  parentRunId: string,
  command: "continue" | "restart",
): RunRow | undefined {
  return ctx.selectRow(
    "runs",
    "WHERE parent_run_id = ? AND origin_command = ? AND error_code IS NOT 'answer_invalid'",
    parentRunId,
    command,
  );
}

/**
 * The answer must fit the JSON Schema the worker saved with the waiting state before a continuation
 * is committed: a refusal writes nothing, so a corrected answer can follow. What JSON Schema cannot
 * say (refinements) the continuation's worker still checks, and its `answer_invalid` keeps the
 * checkpoint open too.
 */
function refuseWrongAnswer(ctx: StoreContext, parent: RunRow, answer: JsonValue): void {
  const saved = readAnswerCheck(ctx, parent.run_id);
  if (!saved) return;
  const verdict = checkAnswer(saved.answerCheck, answer);
  switch (verdict.kind) {
    case "accepted":
    case "unchecked":
      return;
    case "refused":
      throw new StoreError(
        "answer_invalid",
        boundSafeMessage(
          `The answer does not match checkpoint ${saved.path}: ${verdict.problems.join("; ")}. Nothing was saved; answer again.`,
          1024,
        ),
      );
    default:
      verdict satisfies never;
  }
}

/** The checkpoint says who may answer it (`human` when nothing was saved); anyone else is refused. */
function refuseAnswerer(ctx: StoreContext, parent: RunRow, answerer: Answerer): void {
  const saved = readAnswerCheck(ctx, parent.run_id);
  const answeredBy = saved?.answeredBy ?? "human";
  if (mayAnswer(answeredBy, answerer)) return;
  const where = `Checkpoint ${saved?.path ?? parent.cursor_path ?? "?"} of run ${parent.run_id}`;
  throw new StoreError(
    "answer_refused",
    answerer === "model"
      ? `${where} is for a person to answer; the workflow tool cannot answer it. Nothing was saved. Ask the user to answer it (/workflow answer ${parent.run_id} <json>, or piw answer).`
      : `${where} is answered by the model; a person's answer is refused. Nothing was saved. Ask the model to answer it with the workflow tool.`,
  );
}

/**
 * The host's automatic answer: only the default saved with the waiting gate, and only once its
 * deadline has passed. Anything else is a state mismatch, never a person's answer.
 */
function refuseEarlyDefault(ctx: StoreContext, parent: RunRow, answer: JsonValue): Conflict | null {
  const saved = readAnswerCheck(ctx, parent.run_id);
  const timeout = saved?.timeout ?? null;
  if (timeout !== null && timeout.at <= ctx.now() && ctx.jsonHash(timeout.answer) === ctx.jsonHash(answer)) {
    return null;
  }
  return {
    kind: "state_mismatch",
    resource: "run",
    id: parent.run_id,
    expected: "a checkpoint whose deadline has passed, answered with its saved default",
    actual:
      timeout === null ? "no deadline" : timeout.at > ctx.now() ? "deadline not reached" : "another answer",
  };
}

/**
 * A continuation starts from a parent waiting at a checkpoint, with the exact accepted answer. An
 * answer that names no checkpoint answers the one the parent waits at; one that names another is
 * refused.
 */
export function prepareContinuation(ctx: StoreContext, req: PrepareContinuation): Transition<RunRecord> {
  return ctx.tx(() => {
    const keyed = runWithRequestKey(ctx, req.requestKey);
    if (keyed) {
      const same =
        keyed.origin_command === "continue" &&
        keyed.parent_run_id === req.parentRunId &&
        (req.accepted.path === undefined || keyed.accepted_path === req.accepted.path) &&
        (req.accepted.visit === undefined || keyed.accepted_visit === req.accepted.visit) &&
        keyed.accepted_answer_hash === ctx.jsonHash(req.accepted.answer);
      return repeatedRequest(keyed, same);
    }
    const parent = controllableRun(req.parentRunId, ctx.getRunRow(req.parentRunId), "answer");
    if (isConflict(parent)) return conflict(parent);
    const path = req.accepted.path ?? parent.cursor_path;
    const visit = req.accepted.visit ?? parent.cursor_visit;
    if (path === null || visit === null || parent.cursor_path !== path || parent.cursor_visit !== visit) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: parent.run_id,
        expected: `${parent.cursor_path}#${parent.cursor_visit}`,
        actual: `${path}#${visit}`,
      });
    }
    if (req.answerer === "automatic") {
      const refusal = refuseEarlyDefault(ctx, parent, req.accepted.answer);
      if (refusal) return conflict(refusal);
    } else {
      refuseAnswerer(ctx, parent, req.answerer);
      refuseWrongAnswer(ctx, parent, req.accepted.answer);
    }
    const answerHash = ctx.jsonHash(req.accepted.answer);
    const child = existingChild(ctx, parent.run_id, "continue");
    if (child) {
      const same = child.run_id === req.runId && child.accepted_answer_hash === answerHash;
      return same
        ? adopted(mapRunRow(child))
        : conflict({ kind: "child_exists", parentRunId: parent.run_id, childRunId: child.run_id });
    }
    if (ctx.getRunRow(req.runId))
      return conflict({ kind: "request_mismatch", resource: "run", id: req.runId });
    const inserted = insertChild(ctx, {
      runId: req.runId,
      parent,
      command: "continue",
      restartNumber: parent.restart_number,
      parentTerminalFingerprint: parent.terminal_fingerprint,
      accepted: { path, visit, answerHash: ctx.putJson(req.accepted.answer) },
      requestKey: req.requestKey ?? null,
      answeredBy: req.answerer,
    });
    // The parent records who answered; an approval gate's deadline no longer wakes it.
    if (inserted.kind === "applied") {
      updateRun(
        ctx,
        parent,
        { wake_at: null },
        { type: "run.answered", data: { childRunId: req.runId, by: req.answerer } },
      );
    }
    return inserted;
  });
}

/** A restart starts fresh at the first node after any terminal parent; it records its lineage. */
export function prepareRestart(ctx: StoreContext, req: PrepareRestart): Transition<RunRecord> {
  return ctx.tx(() => {
    const keyed = runWithRequestKey(ctx, req.requestKey);
    if (keyed) {
      const same = keyed.origin_command === "restart" && keyed.parent_run_id === req.parentRunId;
      return repeatedRequest(keyed, same);
    }
    const parent = ctx.getRunRow(req.parentRunId);
    if (!parent) return conflict({ kind: "not_found", resource: "run", id: req.parentRunId });
    if (parent.status !== "done" && parent.status !== "failed" && parent.status !== "cancelled") {
      return conflict({
        kind: "parent_not_eligible",
        parentRunId: parent.run_id,
        status: parent.status,
        outcome: parent.outcome,
        requires: "terminal",
      });
    }
    const child = existingChild(ctx, parent.run_id, "restart");
    if (child) {
      return child.run_id === req.runId
        ? adopted(mapRunRow(child))
        : conflict({ kind: "child_exists", parentRunId: parent.run_id, childRunId: child.run_id });
    }
    if (ctx.getRunRow(req.runId))
      return conflict({ kind: "request_mismatch", resource: "run", id: req.runId });
    return insertChild(ctx, {
      runId: req.runId,
      parent,
      command: "restart",
      restartNumber: parent.restart_number + 1,
      parentTerminalFingerprint: parent.terminal_fingerprint,
      accepted: null,
      requestKey: req.requestKey ?? null,
    });
  });
}
