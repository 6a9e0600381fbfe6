import {
  adopted,
  applied,
  conflict,
  type ReservePreparedRun,
  type RunRecord,
  type Transition,
} from "@piw/protocol";
import { canonicalJson } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { repeatedRequest, runWithRequestKey } from "./request-key.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { insertQueuedRun } from "./run-writes.js";
import { sessionRefusal } from "./session-reservation.js";

function budgetJson(req: ReservePreparedRun): string | null {
  return req.budget === undefined ? null : canonicalJson(req.budget);
}

function sameReservation(
  ctx: StoreContext,
  row: RunRow,
  req: ReservePreparedRun,
  inputHash: string,
): boolean {
  const session = req.origin.kind === "pi" ? req.origin.sessionId : null;
  const presentation =
    req.presentationInstructions === undefined ? null : ctx.textHash(req.presentationInstructions);
  return (
    row.origin_command === "start" &&
    row.workflow_name === req.workflowName &&
    row.definition_digest === req.definitionDigest &&
    row.source_json === canonicalJson(req.source) &&
    // A launch that ended before it ran cleared its input: the rest of the request still has to match.
    (row.input_hash === null || row.input_hash === inputHash) &&
    row.manifest_hash === ctx.jsonHash(req.manifest) &&
    row.presentation_hash === presentation &&
    row.notify_model_failure === Number(req.notifyModel?.onFailure ?? false) &&
    row.notify_model_cancel === Number(req.notifyModel?.onCancel ?? false) &&
    row.working_dir === (req.workingDir ?? null) &&
    row.origin_kind === req.origin.kind &&
    row.origin_session === session &&
    row.origin_schedule === (req.origin.kind === "schedule" ? req.origin.scheduleId : null) &&
    row.scheduled_for === (req.origin.kind === "schedule" ? req.origin.scheduledFor : null) &&
    row.request_key === (req.requestKey ?? null) &&
    row.budget_json === budgetJson(req)
  );
}

/** Commit a queued run with its final ID and, for Pi runs, its session's reservation (committed-start rule). */
export function reservePreparedRun(ctx: StoreContext, req: ReservePreparedRun): Transition<RunRecord> {
  return ctx.tx(() => {
    const inputHash = ctx.jsonHash(req.input);
    // Before the session check: a resent start finds its own run holding the session.
    const keyed = runWithRequestKey(ctx, req.requestKey);
    if (keyed) return repeatedRequest(keyed, sameReservation(ctx, keyed, req, inputHash));
    const existing = ctx.getRunRow(req.runId);
    if (existing) {
      return sameReservation(ctx, existing, req, inputHash)
        ? adopted(mapRunRow(existing))
        : conflict({ kind: "request_mismatch", resource: "run", id: req.runId });
    }
    const session = req.origin.kind === "pi" ? req.origin.sessionId : null;
    const refusal = session === null ? undefined : sessionRefusal(ctx, session);
    if (refusal) return conflict(refusal);
    const row = insertQueuedRun(ctx, {
      run_id: req.runId,
      root_run_id: req.runId,
      parent_run_id: null,
      origin_command: "start",
      next_command: "start",
      restart_number: 0,
      parent_terminal_fingerprint: null,
      accepted_path: null,
      accepted_visit: null,
      accepted_answer_hash: null,
      workflow_name: req.workflowName,
      source_json: canonicalJson(req.source),
      definition_digest: req.definitionDigest,
      manifest_hash: ctx.putJson(req.manifest),
      origin_kind: req.origin.kind,
      origin_session: session,
      origin_schedule: req.origin.kind === "schedule" ? req.origin.scheduleId : null,
      scheduled_for: req.origin.kind === "schedule" ? req.origin.scheduledFor : null,
      input_hash: ctx.putJson(req.input),
      // Private like the input; not compared by sameReservation (not part of the request's identity).
      env_hash: req.env === undefined ? null : ctx.putJson(req.env),
      presentation_hash:
        req.presentationInstructions === undefined ? null : ctx.putText(req.presentationInstructions),
      notify_model_failure: req.notifyModel?.onFailure === true ? 1 : 0,
      notify_model_cancel: req.notifyModel?.onCancel === true ? 1 : 0,
      working_dir: req.workingDir ?? null,
      request_key: req.requestKey ?? null,
      budget_json: budgetJson(req),
    });
    return applied(mapRunRow(row));
  });
}
