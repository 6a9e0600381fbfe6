import type { ErrorCode } from "@piw/protocol";
import {
  type AdvanceNodeVisit,
  adopted,
  applied,
  conflict,
  type EffectResult,
  type Fence,
  type FinishNodeVisit,
  type JsonValue,
  type NodeVisitAdvance,
  type NodeVisitResult,
  type ReserveEffect,
  recoveryRequired,
  type SafeError,
  type SettleEffect,
  type StartNodeVisit,
  type Transition,
} from "@piw/protocol";
import { fingerprint } from "./canonical-json.js";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import type { EffectRow, RunRow, StepRow } from "./rows.js";
import { parkRow } from "./run-lifecycle.js";

/** A node visit as the engine needs it: still open (with its attempt), or finished with its result. */
export type NodeVisitState =
  | { status: "running"; path: string; visit: number; attempt: number }
  | { status: "finished"; path: string; visit: number; attempt: number; result: NodeVisitResult };

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
      };
    default:
      return step.status satisfies never;
  }
}

function getStep(ctx: StoreContext, runId: string, path: string, visit: number): StepRow | undefined {
  return ctx
    .stmt("SELECT * FROM run_steps WHERE run_id = ? AND path = ? AND visit = ?")
    .get(runId, path, visit) as StepRow | undefined;
}

function runningRun(ctx: StoreContext, fence: Fence): RunRow | Transition<never> {
  const row = ctx.fencedRun(fence);
  if (isConflict(row)) return conflict(row);
  if (row.status !== "running") {
    return conflict(notRunning(row));
  }
  return row;
}

function isTransition(value: RunRow | Transition<never>): value is Transition<never> {
  return "kind" in value;
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
 * adopted with its saved result so settled work is never repeated. A pause request parks the run here.
 */
export function startNodeVisit(
  ctx: StoreContext,
  fence: Fence,
  req: StartNodeVisit,
): Transition<NodeVisitState> {
  return ctx.tx(() => openVisit(ctx, fence, req));
}

/** The body of `startNodeVisit`, inside the caller's transaction. */
function openVisit(ctx: StoreContext, fence: Fence, req: StartNodeVisit): Transition<NodeVisitState> {
  const row = runningRun(ctx, fence);
  if (isTransition(row)) return row;
  const step = getStep(ctx, row.run_id, req.path, req.visit);
  if (step && step.status !== "running") {
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
    const reason = { code: "paused" as const, message: "Paused at a node boundary by request." };
    parkRow(ctx, row, reason);
    return recoveryRequired(reason);
  }
  if (step) {
    ctx
      .stmt(
        "UPDATE run_steps SET attempt = attempt + 1, started_at = ? WHERE run_id = ? AND path = ? AND visit = ?",
      )
      .run(ctx.now(), row.run_id, req.path, req.visit);
    ctx.bumpRun(
      row,
      {},
      { type: "node.retried", path: req.path, visit: req.visit, data: { attempt: step.attempt + 1 } },
    );
    return applied({ status: "running", path: req.path, visit: req.visit, attempt: step.attempt + 1 });
  }
  const expected = expectedVisit(ctx, row.run_id, req.path, req.visit);
  if (req.visit !== expected) {
    return conflict({
      kind: "state_mismatch",
      resource: "step",
      id: `${row.run_id}:${req.path}`,
      expected: `visit ${expected}`,
      actual: `visit ${req.visit}`,
    });
  }
  ctx
    .stmt(
      "INSERT INTO run_steps (run_id, path, visit, node_kind, attempt, status, started_at) VALUES (?, ?, ?, ?, 1, 'running', ?)",
    )
    .run(row.run_id, req.path, req.visit, req.nodeKind, ctx.now());
  ctx.bumpRun(
    row,
    { step_count: row.step_count + 1, cursor_path: req.path, cursor_visit: req.visit },
    { type: "node.started", path: req.path, visit: req.visit, data: { kind: req.nodeKind } },
  );
  return applied({ status: "running", path: req.path, visit: req.visit, attempt: 1 });
}

/** Whether a saved text blob holds exactly `text`; an error's message is part of the saved result. */
function sameText(ctx: StoreContext, hash: string | null, text: string): boolean {
  return hash !== null && ctx.readTextBlob(hash) === text;
}

function sameResult(ctx: StoreContext, step: StepRow, result: NodeVisitResult): boolean {
  if (step.status !== result.status) return false;
  switch (result.status) {
    case "succeeded":
      return step.output_hash === ctx.jsonHash(result.output) && step.next_path === result.next;
    case "failed":
    case "timed_out":
      return step.error_code === result.error.code && sameText(ctx, step.error_hash, result.error.message);
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

/** The body of `finishNodeVisit`, inside the caller's transaction. */
function closeVisit(ctx: StoreContext, fence: Fence, req: FinishNodeVisit): Transition<NodeVisitState> {
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
  const outputHash = result.status === "succeeded" ? ctx.putJson(result.output) : null;
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
      result.status === "succeeded" ? result.next : null,
      ctx.now(),
      row.run_id,
      req.path,
      req.visit,
    );
  ctx.bumpRun(
    row,
    {},
    {
      type: `node.${result.status}`,
      path: req.path,
      visit: req.visit,
      data: error ? { code: error.code } : null,
    },
    true,
  );
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
    const finished = closeVisit(ctx, fence, req.finish);
    if (finished.kind === "conflict" || finished.kind === "recoveryRequired") return finished;
    // The finish checked the fence's expected revision and moved it; the start needs the same claim only.
    const { expectedRevision: _checked, ...claim } = fence;
    const advance = { finished: finished.value, started: openVisit(ctx, claim, req.start) };
    return finished.kind === "applied" ? applied(advance) : adopted(advance);
  });
}

/** A reserved effect: `reserved` means run it (again, for idempotent effects); `settled` carries the result. */
export type EffectState =
  | { status: "reserved"; effectId: string }
  | { status: "settled"; effectId: string; result: EffectResult };

function effectState(ctx: StoreContext, effect: EffectRow): EffectState {
  if (effect.status === "reserved") return { status: "reserved", effectId: effect.effect_id };
  const result: EffectResult =
    effect.status === "settled"
      ? {
          ok: true,
          value: effect.result_hash === null ? null : (ctx.readJsonBlob(effect.result_hash) as JsonValue),
        }
      : {
          ok: false,
          error: {
            code: (effect.error_code ?? "node_failed") as ErrorCode,
            message: effect.error_hash === null ? "" : ctx.readTextBlob(effect.error_hash),
          },
        };
  return { status: "settled", effectId: effect.effect_id, result };
}

/**
 * Reserve a managed effect before its side effect runs. The same identity with the same request adopts
 * the saved state; with another request it conflicts. An unsettled manual effect parks the run.
 */
export function reserveEffect(ctx: StoreContext, fence: Fence, req: ReserveEffect): Transition<EffectState> {
  return ctx.tx(() => {
    const row = runningRun(ctx, fence);
    if (isTransition(row)) return row;
    const step = getStep(ctx, row.run_id, req.path, req.visit);
    if (step?.status !== "running") {
      return conflict({ kind: "visit_not_open", runId: row.run_id, path: req.path, visit: req.visit });
    }
    const print = fingerprint({ type: req.effectType, mode: req.mode, request: req.request });
    const effect = ctx.stmt("SELECT * FROM effects WHERE effect_id = ?").get(req.effectId) as
      | EffectRow
      | undefined;
    if (effect) {
      const sameIdentity =
        effect.run_id === row.run_id &&
        effect.path === req.path &&
        effect.visit === req.visit &&
        effect.ordinal === req.ordinal;
      if (!sameIdentity || effect.request_fingerprint !== print) {
        return conflict({ kind: "request_mismatch", resource: "effect", id: req.effectId });
      }
      if (effect.status === "reserved" && effect.mode === "manual") {
        const reason = {
          code: "manual_effect_unsettled" as const,
          message: `Manual effect ${req.effectType} was started but never settled; check whether it happened, then resume.`,
          effectId: req.effectId,
        };
        parkRow(ctx, row, reason);
        return recoveryRequired(reason);
      }
      return adopted(effectState(ctx, effect));
    }
    ctx
      .stmt(
        `INSERT INTO effects (effect_id, run_id, path, visit, effect_type, ordinal, mode, request_fingerprint,
          request_hash, status, reserved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?)`,
      )
      .run(
        req.effectId,
        row.run_id,
        req.path,
        req.visit,
        req.effectType,
        req.ordinal,
        req.mode,
        print,
        ctx.putJson(req.request),
        ctx.now(),
      );
    ctx.bumpRun(
      row,
      {},
      {
        type: "effect.reserved",
        path: req.path,
        visit: req.visit,
        data: { effectType: req.effectType, mode: req.mode },
      },
      true,
    );
    return applied({ status: "reserved", effectId: req.effectId });
  });
}

/** Save an effect's result. Settling twice with the same result adopts; with another, it conflicts. */
export function settleEffect(ctx: StoreContext, fence: Fence, req: SettleEffect): Transition<EffectState> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    const effect = ctx.stmt("SELECT * FROM effects WHERE effect_id = ?").get(req.effectId) as
      | EffectRow
      | undefined;
    if (!effect || effect.run_id !== row.run_id)
      return conflict({ kind: "not_found", resource: "effect", id: req.effectId });
    const { result } = req;
    const valueHash = result.ok ? ctx.jsonHash(result.value) : null;
    if (effect.status !== "reserved") {
      const same = result.ok
        ? effect.status === "settled" && effect.result_hash === valueHash
        : effect.status === "failed" &&
          effect.error_code === result.error.code &&
          sameText(ctx, effect.error_hash, result.error.message);
      return same
        ? adopted(effectState(ctx, effect))
        : conflict({
            kind: "state_mismatch",
            resource: "effect",
            id: req.effectId,
            expected: "reserved",
            actual: effect.status,
          });
    }
    if (row.status !== "running") {
      return conflict(notRunning(row));
    }
    ctx
      .stmt(
        "UPDATE effects SET status = ?, result_hash = ?, error_code = ?, error_hash = ?, settled_at = ? WHERE effect_id = ?",
      )
      .run(
        result.ok ? "settled" : "failed",
        result.ok ? ctx.putJson(result.value) : null,
        result.ok ? null : result.error.code,
        result.ok ? null : ctx.putText(result.error.message),
        ctx.now(),
        req.effectId,
      );
    ctx.bumpRun(
      row,
      {},
      {
        type: result.ok ? "effect.settled" : "effect.failed",
        path: effect.path,
        visit: effect.visit,
        data: { effectType: effect.effect_type },
      },
      true,
    );
    return applied({ status: "settled", effectId: req.effectId, result });
  });
}
