import {
  adopted,
  applied,
  conflict,
  type Fence,
  isAllowedTransition,
  type RecoveryReason,
  type ReservePreparedRun,
  type RunCommand,
  type RunEnding,
  type RunRecord,
  type RunStatus,
  type Transition,
} from "@piw/protocol";
import { canonicalJson } from "./canonical-json.js";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import { repeatedRequest, runWithRequestKey } from "./request-key.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { activeRunInSession, sessionRefusal } from "./session-reservation.js";
import { terminalize } from "./terminalize.js";
import { decideWorkerExit, type WorkerExitVerdict } from "./worker-exit-decision.js";

export interface Claim {
  command: RunCommand;
  revision: number;
}

function invalid<T>(row: RunRow, to: RunStatus): Transition<T> {
  return conflict({ kind: "invalid_transition", runId: row.run_id, from: row.status, to });
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
    row.input_hash === inputHash &&
    row.manifest_hash === ctx.jsonHash(req.manifest) &&
    row.presentation_hash === presentation &&
    row.working_dir === (req.workingDir ?? null) &&
    row.origin_kind === req.origin.kind &&
    row.origin_session === session &&
    row.request_key === (req.requestKey ?? null)
  );
}

/** Commit a queued run with its final ID and, for Pi runs, the session's one reservation (seed 003). */
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
    const now = ctx.now();
    ctx
      .stmt(
        `INSERT INTO runs (run_id, root_run_id, parent_run_id, origin_command, next_command, restart_number,
          workflow_name, source_json, definition_digest, manifest_hash, origin_kind, origin_session, status,
          generation, revision, progress_revision, paused, step_count, input_hash, presentation_hash,
          working_dir, request_key, presentation_state, created_at, updated_at)
         VALUES (?, ?, NULL, 'start', 'start', 0, ?, ?, ?, ?, ?, ?, 'queued', 0, 1, 0, 0, 0, ?, ?, ?, ?, 'none', ?, ?)`,
      )
      .run(
        req.runId,
        req.runId,
        req.workflowName,
        canonicalJson(req.source),
        req.definitionDigest,
        ctx.putJson(req.manifest),
        req.origin.kind,
        session,
        ctx.putJson(req.input),
        req.presentationInstructions === undefined ? null : ctx.putText(req.presentationInstructions),
        req.workingDir ?? null,
        req.requestKey ?? null,
        now,
        now,
      );
    ctx.appendEvent(req.runId, 1, { type: "run.queued", data: { command: "start" } });
    return applied(mapRunRow(ctx.getRunRow(req.runId) as RunRow));
  });
}

function commandFor(ctx: StoreContext, row: RunRow): RunCommand {
  const fenced = { runId: row.run_id, generation: row.generation, claimToken: row.claim_token ?? "" };
  switch (row.next_command) {
    case "start":
      return { type: "start", ...fenced };
    case "resume":
      return { type: "resume", ...fenced };
    case "continue":
      return {
        type: "continue",
        ...fenced,
        parentRunId: row.parent_run_id ?? "",
        accepted: {
          path: row.accepted_path ?? "",
          visit: row.accepted_visit ?? 1,
          answer: ctx.readJsonBlob(row.accepted_answer_hash ?? ""),
        },
      };
    case "restart":
      return {
        type: "restart",
        ...fenced,
        parentRunId: row.parent_run_id ?? "",
        restartNumber: row.restart_number,
      };
    default:
      return row.next_command satisfies never;
  }
}

export interface ClaimRequest {
  runId: string;
  claimToken: string;
  leaseMs: number;
  expectedRevision?: number;
}

/**
 * queued -> starting, or parked -> starting (an explicit resume). Returns the one run command the
 * worker will execute. A repeated claim with the same token adopts; any other is refused.
 */
export function claimRun(ctx: StoreContext, req: ClaimRequest): Transition<Claim> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.status === "starting" && row.claim_token === req.claimToken) {
      return adopted({ command: commandFor(ctx, row), revision: row.revision });
    }
    if (req.expectedRevision !== undefined && req.expectedRevision !== row.revision) {
      return conflict({
        kind: "revision_mismatch",
        runId: row.run_id,
        expected: req.expectedRevision,
        actual: row.revision,
      });
    }
    if (!isAllowedTransition(row.status, "starting")) return invalid(row, "starting");
    if (row.status === "parked" && row.origin_session !== null) {
      const active = activeRunInSession(ctx, row.origin_session);
      if (active)
        return conflict({ kind: "session_busy", sessionId: row.origin_session, activeRunId: active });
    }
    const from = row.status;
    const revision = ctx.bumpRun(
      row,
      {
        status: "starting",
        generation: row.generation + 1,
        claim_token: req.claimToken,
        lease_expires_at: ctx.now() + req.leaseMs,
        // Only an explicit resume clears a pause; a re-claim after an expired lease keeps it.
        paused: row.status === "parked" ? 0 : row.paused,
        recovery_reason: null,
      },
      { type: "run.claimed", data: { from, generation: row.generation } },
    );
    return applied({ command: commandFor(ctx, row), revision });
  });
}

/** starting -> running: the worker validated its command and is about to build the engine. */
export function markRunning(ctx: StoreContext, fence: Fence): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status === "running") return adopted(mapRunRow(row));
    if (!isAllowedTransition(row.status, "running")) return invalid(row, "running");
    // Every later activation of this run continues saved state rather than repeating its first command.
    ctx.bumpRun(
      row,
      {
        status: "running",
        lease_expires_at: null,
        next_command: "resume",
        started_at: row.started_at ?? ctx.now(),
      },
      { type: "run.running" },
    );
    return applied(mapRunRow(row));
  });
}

function endingColumns(ctx: StoreContext, ending: RunEnding) {
  switch (ending.outcome) {
    case "completed":
      return {
        status: "done" as const,
        finalOutputHash: ctx.putJson(ending.output),
        error: null,
        cursor: null,
      };
    case "waiting":
      return {
        status: "done" as const,
        // The waiting state: where it stopped, what it asked, and what the host checks of an answer.
        finalOutputHash: ctx.putJson({ checkpoint: ending.checkpoint, answerCheck: ending.answerCheck }),
        error: null,
        cursor: ending.checkpoint,
      };
    case "failed":
    case "timed_out":
      return { status: "failed" as const, finalOutputHash: null, error: ending.error, cursor: null };
    default:
      return ending satisfies never;
  }
}

/**
 * running -> done | failed, or starting -> failed for a deferred launch failure. Terminal control
 * state is committed here; messages about it come later from the saved facts.
 */
export function finishRun(ctx: StoreContext, fence: Fence, ending: RunEnding): Transition<RunRecord> {
  return ctx.tx(() => {
    const current = ctx.getRunRow(fence.runId);
    const target = ending.outcome === "completed" || ending.outcome === "waiting" ? "done" : "failed";
    if (current && current.outcome === ending.outcome && current.generation === fence.generation + 1) {
      const cols = endingColumns(ctx, ending);
      const sameError = (cols.error?.code ?? null) === current.error_code;
      if (cols.finalOutputHash === current.final_output_hash && sameError) return adopted(mapRunRow(current));
    }
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (!isAllowedTransition(row.status, target)) return invalid(row, target);
    if (row.status === "starting" && target !== "failed") return invalid(row, target);
    // `answer_invalid` reopens the parent's checkpoint (runs_one_continuation skips such a child), so
    // only a continuation that refused its answer before any node ran may end with it.
    if (
      "error" in ending &&
      ending.error.code === "answer_invalid" &&
      (row.origin_command !== "continue" || row.step_count !== 0)
    ) {
      throw new StoreError(
        "invalid_record",
        `Run ${row.run_id} cannot end with answer_invalid: only a continuation that ran no node can.`,
      );
    }
    const cols = endingColumns(ctx, ending);
    if (cols.cursor) {
      ctx
        .stmt("UPDATE runs SET cursor_path = ?, cursor_visit = ? WHERE run_id = ?")
        .run(cols.cursor.path, cols.cursor.visit, row.run_id);
      row.cursor_path = cols.cursor.path;
      row.cursor_visit = cols.cursor.visit;
    }
    terminalize(
      ctx,
      row,
      {
        status: cols.status,
        outcome: ending.outcome,
        finalOutputHash: cols.finalOutputHash,
        error: cols.error,
        present: true,
      },
      { type: `run.${ending.outcome}`, data: cols.error ? { code: cols.error.code } : null },
    );
    return applied(mapRunRow(row));
  });
}

/** Any non-terminal state -> cancelled. Invalidates the claim so no stale worker can act after it. */
export function cancelRun(
  ctx: StoreContext,
  req: { runId: string; expectedRevision?: number },
): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.status === "cancelled") return adopted(mapRunRow(row));
    if (req.expectedRevision !== undefined && req.expectedRevision !== row.revision) {
      return conflict({
        kind: "revision_mismatch",
        runId: row.run_id,
        expected: req.expectedRevision,
        actual: row.revision,
      });
    }
    if (!isAllowedTransition(row.status, "cancelled")) return invalid(row, "cancelled");
    // A launch cancelled before it ran sends no follow-up (seed 003); a started run gets a terminal note.
    const present = row.started_at !== null;
    terminalize(
      ctx,
      row,
      {
        status: "cancelled",
        outcome: "cancelled",
        error: { code: "cancelled", message: "Cancelled by request." },
        present,
      },
      { type: "run.cancelled" },
    );
    return applied(mapRunRow(row));
  });
}

function sameReason(a: string | null, b: RecoveryReason): boolean {
  return a !== null && a === canonicalJson(b);
}

/** running -> parked with a reason; releases the claim. */
export function parkRun(ctx: StoreContext, fence: Fence, reason: RecoveryReason): Transition<RunRecord> {
  return ctx.tx(() => {
    const current = ctx.getRunRow(fence.runId);
    if (
      current?.status === "parked" &&
      current.generation === fence.generation + 1 &&
      sameReason(current.recovery_reason, reason)
    ) {
      return adopted(mapRunRow(current));
    }
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    // A worker parks only a run it accepted; `starting -> parked` is the host's verdict on a lost launch.
    if (row.status !== "running") return invalid(row, "parked");
    parkRow(ctx, row, reason);
    return applied(mapRunRow(row));
  });
}

/** The park write, shared by explicit parks, pauses at a node boundary and worker-loss recovery. */
export function parkRow(ctx: StoreContext, row: RunRow, reason: RecoveryReason): void {
  ctx.bumpRun(
    row,
    {
      status: "parked",
      claim_token: null,
      lease_expires_at: null,
      generation: row.generation + 1,
      recovery_reason: canonicalJson(reason),
      paused: reason.code === "paused" ? 1 : 0,
    },
    { type: "run.parked", data: { reason: reason.code } },
  );
  ctx
    .stmt("UPDATE turns SET status = 'lost', ended_at = ? WHERE run_id = ? AND status = 'open'")
    .run(ctx.now(), row.run_id);
}

/** Ask a running or starting run to pause; the worker parks it at the next node boundary. */
export function requestPause(ctx: StoreContext, req: { runId: string }): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.paused === 1) return adopted(mapRunRow(row));
    if (row.status !== "running" && row.status !== "starting") {
      return conflict(notRunning(row));
    }
    ctx.bumpRun(row, { paused: 1 }, { type: "run.pause_requested" });
    return applied(mapRunRow(row));
  });
}

/**
 * A `starting` run whose lease expired with no worker launched for it: whoever claimed it died with its
 * host. Judged by the same rule as a lost worker: a command that never ran returns to `queued` (seed
 * 003), a resume of saved state parks with its reason (seed 000: never relaunched by itself).
 */
export function recoverExpiredStarting(ctx: StoreContext, req: { runId: string }): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.status !== "starting") return invalid(row, "queued");
    if (row.lease_expires_at !== null && row.lease_expires_at > ctx.now()) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "lease expired",
        actual: "lease live",
      });
    }
    const verdict = decideWorkerExit({
      command: row.next_command,
      progressSinceLaunch: false,
      report: { kind: "none" },
      runStatus: "starting",
      hostAlive: false,
    });
    if (verdict.kind === "requeue") {
      ctx.bumpRun(
        row,
        { status: "queued", claim_token: null, lease_expires_at: null, generation: row.generation + 1 },
        { type: "run.lease_expired" },
      );
    } else {
      applyWorkerExitVerdict(ctx, row, verdict, null);
    }
    return applied(mapRunRow(row));
  });
}

/** The writes a verdict implies for a run that still holds the launch's claim. */
export function applyWorkerExitVerdict(
  ctx: StoreContext,
  run: RunRow,
  verdict: WorkerExitVerdict,
  launchId: string | null,
): void {
  const launch: Record<string, string> = launchId === null ? {} : { launchId };
  switch (verdict.kind) {
    case "record_only":
      return;
    case "fail":
      terminalize(
        ctx,
        run,
        { status: "failed", outcome: "failed", error: verdict.error, present: true },
        { type: "run.failed", data: { code: verdict.error.code, ...launch } },
      );
      return;
    case "requeue":
      // Nothing ran and the claim's holder is provably dead: seed 003's `starting -> queued`.
      ctx.bumpRun(
        run,
        { status: "queued", claim_token: null, lease_expires_at: null, generation: run.generation + 1 },
        { type: "run.requeued", data: launch },
      );
      return;
    case "relaunch":
      // Progress is measured from a recorded launch, so a relaunch always has one.
      if (launchId === null) throw new Error("A relaunch verdict needs the launch it follows.");
      parkRow(ctx, run, { ...verdict.reason, launchId });
      return;
    case "park":
      parkRow(ctx, run, { ...verdict.reason, ...launch });
      return;
    default:
      verdict satisfies never;
  }
}
