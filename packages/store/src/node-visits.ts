import {
  type AdvanceNodeVisit,
  adopted,
  applied,
  conflict,
  type ErrorCode,
  type Fence,
  type FinishNodeVisit,
  type NodeVisitAdvance,
  type NodeVisitResult,
  type NodeVisitState,
  PAUSED_AT_NODE_BOUNDARY,
  recoveryRequired,
  type SafeError,
  type StartNodeVisit,
  type TraceEventInput,
  type Transition,
  type VisitDeadline,
} from "@piw/protocol";
import { isConflict, isTransition, notRunning, runningRun, type StoreContext } from "./context.js";
import { resumedDeadline } from "./deadline-clock.js";
import { dropVisitProgress } from "./node-progress.js";
import type { RunRow, StepRow } from "./rows.js";
import { parkRow } from "./run-recovery.js";
import { type RunChange, updateRun, updateRunAfter, writeHeld } from "./run-writes.js";

function stepResult(ctx: StoreContext, step: StepRow): NodeVisitResult | null {
  switch (step.status) {
    case "running":
      return null;
    case "succeeded":
      return {
        status: "succeeded",
        output: step.output_hash === null ? null : ctx.readJsonBlob(step.output_hash),
        next: step.next_path,
      };
    case "failed":
    case "timed_out":
      return {
        status: step.status,
        error: {
          code: (step.error_code ?? "node_failed") as ErrorCode,
          message: step.error_hash === null ? "" : ctx.readTextBlob(step.error_hash),
        },
        // A routed failure: where it went, and what a shell command reported.
        ...(step.next_path === null ? {} : { next: step.next_path }),
        ...(step.output_hash === null ? {} : { output: ctx.readJsonBlob(step.output_hash) }),
      };
    default:
      return step.status satisfies never;
  }
}

export function getStep(ctx: StoreContext, runId: string, path: string, visit: number): StepRow | undefined {
  return ctx.selectRow("run_steps", "WHERE run_id = ? AND path = ? AND visit = ?", runId, path, visit);
}

const ANY_VISIT = "SELECT 1 FROM run_steps WHERE run_id = ? AND path = ? LIMIT 1";
const ONE_VISIT = "SELECT 1 FROM run_steps WHERE run_id = ? AND path = ? AND visit = ?";
const VISIT_FROM = "SELECT 1 FROM run_steps WHERE run_id = ? AND path = ? AND visit >= ? LIMIT 1";

function exists(ctx: StoreContext, sql: string, ...params: (string | number)[]): boolean {
  return ctx.stmt(sql).get(...params) !== undefined;
}

/**
 * The visit number a new start of `path` must carry: one past its highest saved visit. The usual cases
 * (a first visit; the visit right after the last one) are proved with forward index seeks; anything else
 * asks max(visit), which this SQLite build (ENABLE_STAT4) re-prepares on every call, ~5x a seek.
 */
function expectedVisit(ctx: StoreContext, runId: string, path: string, visit: number): number {
  if (visit === 1) {
    if (!exists(ctx, ANY_VISIT, runId, path)) return 1;
  } else if (exists(ctx, ONE_VISIT, runId, path, visit - 1) && !exists(ctx, VISIT_FROM, runId, path, visit)) {
    return visit;
  }
  const last = ctx
    .stmt("SELECT max(visit) AS v FROM run_steps WHERE run_id = ? AND path = ?")
    .get(runId, path) as { v: number | null };
  return (last.v ?? 0) + 1;
}

/**
 * Open a node visit, or reopen it after a crash (same visit number, next attempt). A finished visit is
 * adopted with its saved result so settled work is never repeated. A pause request parks the run here
 * (a branch's start, `holdOnPause`, is only refused: its fork parks the run).
 */
export function startNodeVisit(
  ctx: StoreContext,
  fence: Fence,
  req: StartNodeVisit,
): Transition<NodeVisitState> {
  return ctx.tx(() => openVisit(ctx, fence, req));
}

/** A visit just closed in this transaction: its run row (checked running) and the run change it holds. */
interface ClosedVisit {
  row: RunRow;
  held: RunChange | null;
}

/**
 * The body of `startNodeVisit`, inside the caller's transaction. After a close (`advanceNodeVisit`), the
 * run row is the close's, and its held change is written with this start's in one UPDATE.
 */
function openVisit(
  ctx: StoreContext,
  fence: Fence,
  req: StartNodeVisit,
  closed?: ClosedVisit,
): Transition<NodeVisitState> {
  const row = closed?.row ?? runningRun(ctx, fence);
  if (isTransition(row)) return row;
  const held = closed?.held ?? null;
  const step = getStep(ctx, row.run_id, req.path, req.visit);
  if (step && step.status !== "running") {
    writeHeld(ctx, row, held);
    const result = stepResult(ctx, step) as NodeVisitResult;
    return adopted({
      status: "finished",
      path: step.path,
      visit: step.visit,
      attempt: step.attempt,
      result,
    });
  }
  if (row.paused === 1) {
    writeHeld(ctx, row, held);
    const reason = PAUSED_AT_NODE_BOUNDARY;
    // A branch's start stops here without parking: its fork parks the run once all its branches rest.
    if (req.holdOnPause !== true) parkRow(ctx, row, reason);
    return recoveryRequired(reason);
  }
  if (step) {
    // The deadline keeps what was left of it when the visit's execution stopped.
    const now = ctx.now();
    const deadlineAt = resumedDeadline(step, now);
    ctx
      .stmt(
        "UPDATE run_steps SET attempt = attempt + 1, started_at = ?, deadline_at = ?, stopped_at = NULL WHERE run_id = ? AND path = ? AND visit = ?",
      )
      .run(now, deadlineAt, row.run_id, req.path, req.visit);
    updateRunAfter(
      ctx,
      row,
      held,
      {},
      {
        type: "node.retried",
        path: req.path,
        visit: req.visit,
        data: { attempt: step.attempt + 1 },
      },
    );
    return applied({
      status: "running",
      path: req.path,
      visit: req.visit,
      attempt: step.attempt + 1,
      ...deadlineField(deadlineOf({ timeout_ms: step.timeout_ms, deadline_at: deadlineAt })),
      ...(step.due_at === null ? {} : { dueAt: step.due_at }),
      ...(step.failed_attempts === 0 ? {} : { failedAttempts: step.failed_attempts }),
    });
  }
  const expected = expectedVisit(ctx, row.run_id, req.path, req.visit);
  if (req.visit !== expected) {
    writeHeld(ctx, row, held);
    return conflict({
      kind: "state_mismatch",
      resource: "step",
      id: `${row.run_id}:${req.path}`,
      expected: `visit ${expected}`,
      actual: `visit ${req.visit}`,
    });
  }
  const startedAt = ctx.now();
  const timeoutMs = req.timeoutMs ?? null;
  const deadlineAt = timeoutMs === null ? null : startedAt + timeoutMs;
  ctx
    .stmt(
      "INSERT INTO run_steps (run_id, path, visit, node_kind, attempt, status, started_at, timeout_ms, deadline_at) VALUES (?, ?, ?, ?, 1, 'running', ?, ?, ?)",
    )
    .run(row.run_id, req.path, req.visit, req.nodeKind, startedAt, timeoutMs, deadlineAt);
  updateRunAfter(
    ctx,
    row,
    held,
    { step_count: row.step_count + 1, cursor_path: req.path, cursor_visit: req.visit },
    { type: "node.started", path: req.path, visit: req.visit, data: { kind: req.nodeKind } },
  );
  const deadline = timeoutMs === null || deadlineAt === null ? null : { timeoutMs, at: deadlineAt };
  return applied({
    status: "running",
    path: req.path,
    visit: req.visit,
    attempt: 1,
    ...deadlineField(deadline),
  });
}

/** The open visit's `deadline` field: present only when the visit has one. */
function deadlineField(deadline: VisitDeadline | null): { deadline?: VisitDeadline } {
  return deadline === null ? {} : { deadline };
}

/** A visit's saved deadline, or null when it has none. */
function deadlineOf(step: Pick<StepRow, "timeout_ms" | "deadline_at">): VisitDeadline | null {
  return step.timeout_ms === null || step.deadline_at === null
    ? null
    : { timeoutMs: step.timeout_ms, at: step.deadline_at };
}

/** Whether a saved text blob holds exactly `text`; an error's message is part of the saved result. */
export function sameText(ctx: StoreContext, hash: string | null, text: string): boolean {
  return hash !== null && ctx.readTextBlob(hash) === text;
}

function sameResult(ctx: StoreContext, step: StepRow, result: NodeVisitResult): boolean {
  if (step.status !== result.status) return false;
  switch (result.status) {
    case "succeeded":
      return step.output_hash === ctx.jsonHash(result.output) && step.next_path === result.next;
    case "failed":
    case "timed_out":
      return (
        step.error_code === result.error.code &&
        sameText(ctx, step.error_hash, result.error.message) &&
        step.next_path === (result.next ?? null) &&
        step.output_hash === (result.output === undefined ? null : ctx.jsonHash(result.output))
      );
    default:
      return result satisfies never;
  }
}

function visitEndEvent(path: string, visit: number, result: NodeVisitResult): TraceEventInput {
  switch (result.status) {
    case "succeeded":
      return { type: "node.succeeded", path, visit };
    case "failed":
      return { type: "node.failed", path, visit, data: { code: result.error.code } };
    case "timed_out":
      return { type: "node.timed_out", path, visit, data: { code: result.error.code } };
    default:
      return result satisfies never;
  }
}

/** Close an open node visit with its output or error. This is durable progress. */
export function finishNodeVisit(
  ctx: StoreContext,
  fence: Fence,
  req: FinishNodeVisit,
): Transition<NodeVisitState> {
  return ctx.tx(() => closeVisit(ctx, fence, req));
}

/**
 * The body of `finishNodeVisit`, inside the caller's transaction. With `hold`, an applied close leaves
 * its run change to the caller (`hold` gets it) instead of writing it.
 */
function closeVisit(
  ctx: StoreContext,
  fence: Fence,
  req: FinishNodeVisit,
  hold?: (closed: ClosedVisit) => void,
): Transition<NodeVisitState> {
  const row = ctx.fencedRun(fence);
  if (isConflict(row)) return conflict(row);
  const step = getStep(ctx, row.run_id, req.path, req.visit);
  if (!step) return conflict({ kind: "visit_not_open", runId: row.run_id, path: req.path, visit: req.visit });
  const finished = { status: "finished" as const, path: req.path, visit: req.visit, attempt: step.attempt };
  if (step.status !== "running") {
    return sameResult(ctx, step, req.result)
      ? adopted({ ...finished, result: stepResult(ctx, step) as NodeVisitResult })
      : conflict({
          kind: "state_mismatch",
          resource: "step",
          id: `${row.run_id}:${req.path}:${req.visit}`,
          expected: "running",
          actual: step.status,
        });
  }
  if (row.status !== "running") {
    return conflict(notRunning(row));
  }
  const { result } = req;
  const outputHash = result.output === undefined ? null : ctx.putJson(result.output);
  const error: SafeError | null = result.status === "succeeded" ? null : result.error;
  ctx
    .stmt(
      "UPDATE run_steps SET status = ?, output_hash = ?, error_code = ?, error_hash = ?, next_path = ?, finished_at = ? WHERE run_id = ? AND path = ? AND visit = ?",
    )
    .run(
      result.status,
      outputHash,
      error?.code ?? null,
      error ? ctx.putText(error.message) : null,
      result.next ?? null,
      ctx.now(),
      row.run_id,
      req.path,
      req.visit,
    );
  dropVisitProgress(ctx, row.run_id, req.path, req.visit);
  const event = visitEndEvent(req.path, req.visit, result);
  if (hold) hold({ row, held: { columns: {}, event, progress: true } });
  else updateRun(ctx, row, {}, event, { progress: true });
  return applied({ ...finished, result });
}

/**
 * Finish a visit and open the one it succeeded into, in one transaction: exactly what `finishNodeVisit`
 * then `startNodeVisit` would save, with one commit. A refused finish saves nothing and is the result;
 * the start's own outcome (applied, adopted, or refused, as a pause parks the run) rides along with the
 * saved finish.
 */
export function advanceNodeVisit(
  ctx: StoreContext,
  fence: Fence,
  req: AdvanceNodeVisit,
): Transition<NodeVisitAdvance> {
  return ctx.tx(() => {
    let closed: ClosedVisit | undefined;
    const finished = closeVisit(ctx, fence, req.finish, (visit) => {
      closed = visit;
    });
    if (finished.kind === "conflict" || finished.kind === "recoveryRequired") return finished;
    // The finish checked the fence's expected revision and moves it; the start needs the same claim only.
    const { expectedRevision: _checked, ...claim } = fence;
    const advance = { finished: finished.value, started: openVisit(ctx, claim, req.start, closed) };
    return finished.kind === "applied" ? applied(advance) : adopted(advance);
  });
}
