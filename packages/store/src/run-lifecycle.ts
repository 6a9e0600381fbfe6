import {
  adopted,
  type Answerer,
  applied,
  conflict,
  canonicalJson,
  type Conflict,
  type Fence,
  type RunCommand,
  type RunEnding,
  type RedefineRun,
  type RunRecord,
  type SafeError,
  type Transition,
} from "@piw/protocol";
import { dueRun } from "./clock.js";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { controllableRun } from "./run-control.js";
import { redefineRunRow, transitionRefusal, transitionRun } from "./run-writes.js";
import { activeRunInSession } from "./session-reservation.js";
import { type TerminalEvent, terminalize } from "./terminalize.js";

export interface Claim {
  command: RunCommand;
  revision: number;
}

function commandFor(ctx: StoreContext, row: RunRow, acceptChanges = false): RunCommand {
  const fenced = { runId: row.run_id, generation: row.generation, claimToken: row.claim_token ?? "" };
  switch (row.next_command) {
    case "start":
      return { type: "start", ...fenced };
    case "resume":
      return { type: "resume", ...fenced, ...(acceptChanges ? { acceptChanges: true as const } : {}) };
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
  /** An explicit resume: the run must be one `controllableRun` lets a person resume. */
  resume?: true;
  /** With `resume`: the person accepts the run's changed workflow file (checked by the worker). */
  acceptChanges?: true;
  /** The host's clock: the run must be parked on a wait or retry that is due now and not paused. */
  wake?: true;
}

/**
 * Whether a claimed run stays paused. A claim of a parked run resumes it and clears a pause, except the
 * host's relaunch after a lost worker (`worker_lost`, not an explicit resume): a pause asked for before
 * the worker died still holds, and the new worker parks at the first boundary. A re-claim after an
 * expired lease keeps it too.
 */
function pausedAfterClaim(row: RunRow, req: ClaimRequest): RunRow["paused"] {
  if (row.status !== "parked") return row.paused;
  if (req.resume === true || row.recovery_reason === null) return 0;
  const reason = JSON.parse(row.recovery_reason) as { code?: string };
  return reason.code === "worker_lost" ? row.paused : 0;
}

/** The refusal of a request that expected another revision of the run, if it did. */
function revisionMismatch(row: RunRow, expected: number | undefined): Conflict | null {
  if (expected === undefined || expected === row.revision) return null;
  return { kind: "revision_mismatch", runId: row.run_id, expected, actual: row.revision };
}

/** Why the store would refuse this claim of the row now, or null when it would apply it. */
function claimRefusal(
  ctx: StoreContext,
  row: RunRow,
  req: Omit<ClaimRequest, "claimToken" | "leaseMs">,
): Conflict | null {
  const resumable = req.resume
    ? controllableRun(req.runId, row, "resume")
    : req.wake
      ? dueRun(row, ctx.now())
      : row;
  if (isConflict(resumable)) return resumable;
  const stale = revisionMismatch(row, req.expectedRevision);
  if (stale) return stale;
  const refusal = transitionRefusal(row, "starting");
  if (refusal) return refusal;
  if (row.status === "parked" && row.origin_session !== null) {
    const active = activeRunInSession(ctx, row.origin_session);
    if (active) return { kind: "session_busy", sessionId: row.origin_session, activeRunId: active };
  }
  return null;
}

/**
 * Whether `claimRun` would claim the run now, without claiming it: the host asks before it lets a run
 * wait for a free worker slot, so a request the store refuses is refused at once.
 */
export function checkClaim(
  ctx: StoreContext,
  req: Omit<ClaimRequest, "claimToken" | "leaseMs">,
): Conflict | null {
  const row = ctx.getRunRow(req.runId);
  if (!row) return { kind: "not_found", resource: "run", id: req.runId };
  return claimRefusal(ctx, row, req);
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
    const refused = claimRefusal(ctx, row, req);
    if (refused) return conflict(refused);
    const from = row.status;
    const revision = transitionRun(
      ctx,
      row,
      "starting",
      {
        generation: row.generation + 1,
        claim_token: req.claimToken,
        lease_expires_at: ctx.now() + req.leaseMs,
        paused: pausedAfterClaim(row, req),
        recovery_reason: null,
        wake_at: null,
      },
      { type: "run.claimed", data: { from, generation: row.generation } },
    );
    return applied({
      command: commandFor(ctx, row, req.resume === true && req.acceptChanges === true),
      revision,
    });
  });
}

/**
 * A running run follows its changed workflow from now on: the worker of an accepted resume checked the
 * saved position against it. The name cannot change (the run's ID and its readers carry it).
 */
export function redefineRun(ctx: StoreContext, fence: Fence, req: RedefineRun): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status !== "running") return conflict(notRunning(row));
    if (req.workflowName !== row.workflow_name) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: `workflow ${row.workflow_name}`,
        actual: `workflow ${req.workflowName}`,
      });
    }
    const definition = {
      source_json: canonicalJson(req.source),
      definition_digest: req.definitionDigest,
      manifest_hash: ctx.putJson(req.manifest),
    };
    if (
      definition.source_json === row.source_json &&
      definition.definition_digest === row.definition_digest &&
      definition.manifest_hash === row.manifest_hash
    ) {
      return adopted(mapRunRow(row));
    }
    redefineRunRow(ctx, row, definition);
    return applied(mapRunRow(row));
  });
}

/** starting -> running: the worker validated its command and is about to build the engine. */
export function markRunning(ctx: StoreContext, fence: Fence): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status === "running") return adopted(mapRunRow(row));
    const refusal = transitionRefusal(row, "running");
    if (refusal) return conflict(refusal);
    // Every later activation of this run continues saved state rather than repeating its first command.
    transitionRun(
      ctx,
      row,
      "running",
      {
        lease_expires_at: null,
        next_command: "resume",
        started_at: row.started_at ?? ctx.now(),
      },
      { type: "run.running" },
    );
    return applied(mapRunRow(row));
  });
}

interface EndingColumns {
  status: "done" | "failed";
  finalOutputHash: string | null;
  error: SafeError | null;
  cursor: { path: string; visit: number } | null;
  /** When the host's clock acts on the ended run (a waiting gate's deadline); absent: never. */
  wakeAt?: number | null;
  event: TerminalEvent;
}

function endingColumns(ctx: StoreContext, ending: RunEnding): EndingColumns {
  switch (ending.outcome) {
    case "completed":
      return {
        status: "done",
        finalOutputHash: ctx.putJson(ending.output),
        error: null,
        cursor: null,
        event: { type: "run.completed" },
      };
    case "waiting":
      return {
        status: "done",
        // The waiting state: where it stopped, what it asked, and what the host checks of an answer.
        finalOutputHash: ctx.putJson({
          checkpoint: ending.checkpoint,
          answerCheck: ending.answerCheck,
          ...(ending.timeout ? { timeout: ending.timeout } : {}),
        }),
        error: null,
        cursor: ending.checkpoint,
        // An approval gate's deadline: the host's one clock takes its default then.
        wakeAt: ending.timeout?.at ?? null,
        event: { type: "run.waiting" },
      };
    case "failed":
      return {
        status: "failed",
        finalOutputHash: null,
        error: ending.error,
        cursor: null,
        event: { type: "run.failed", data: { code: ending.error.code } },
      };
    case "timed_out":
      return {
        status: "failed",
        finalOutputHash: null,
        error: ending.error,
        cursor: null,
        event: { type: "run.timed_out", data: { code: ending.error.code } },
      };
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
    const refusal = transitionRefusal(row, target);
    if (refusal) return conflict(refusal);
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
    terminalize(
      ctx,
      row,
      {
        status: cols.status,
        outcome: ending.outcome,
        finalOutputHash: cols.finalOutputHash,
        error: cols.error,
        present: true,
        ...(cols.cursor ? { cursor: { path: cols.cursor.path, visit: cols.cursor.visit } } : {}),
        ...(cols.wakeAt ? { wakeAt: cols.wakeAt } : {}),
      },
      cols.event,
    );
    return applied(mapRunRow(row));
  });
}

/** Any non-terminal state -> cancelled. Invalidates the claim so no stale worker can act after it. */
export function cancelRun(
  ctx: StoreContext,
  req: { runId: string; expectedRevision?: number; by?: Answerer },
): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    if (row.status === "cancelled") return adopted(mapRunRow(row));
    const stale = revisionMismatch(row, req.expectedRevision);
    if (stale) return conflict(stale);
    const cancellable = controllableRun(req.runId, row, "cancel");
    if (isConflict(cancellable)) return conflict(cancellable);
    // A launch cancelled before it ran sends nothing (one-follow-up rule); a started run gets a terminal note.
    const present = row.started_at !== null;
    terminalize(
      ctx,
      row,
      {
        status: "cancelled",
        outcome: "cancelled",
        error: { code: "cancelled", message: "Cancelled by request." },
        present,
        cancelledByModel: req.by === "model",
      },
      { type: "run.cancelled" },
    );
    return applied(mapRunRow(row));
  });
}
