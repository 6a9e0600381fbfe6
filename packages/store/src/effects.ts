import {
  adopted,
  applied,
  conflict,
  type EffectResult,
  type EffectState,
  effectRequestText,
  type ErrorCode,
  type Fence,
  type JsonValue,
  manualEffectUnsettled,
  type ReserveEffect,
  recoveryRequired,
  type SettleEffect,
  type Transition,
} from "@piw/protocol";
import { settleStoppedSession } from "./budget-spend.js";
import { sha256 } from "./sha256.js";
import { isConflict, isTransition, notRunning, runningRun, type StoreContext } from "./context.js";
import { getStep, sameText } from "./node-visits.js";
import type { EffectRow } from "./rows.js";
import { parkRow } from "./run-recovery.js";
import { updateRun } from "./run-writes.js";

// Managed effects of a node visit: reserved before their side effect runs, settled with its result.

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
    const print = sha256(effectRequestText(req));
    const effect = ctx.selectRow("effects", "WHERE effect_id = ?", req.effectId);
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
        const reason = manualEffectUnsettled(req.effectType, req.effectId);
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
    updateRun(
      ctx,
      row,
      {},
      {
        type: "effect.reserved",
        path: req.path,
        visit: req.visit,
        data: { effectType: req.effectType, mode: req.mode },
      },
      { progress: true },
    );
    return applied({ status: "reserved", effectId: req.effectId });
  });
}

/** Save an effect's result. Settling twice with the same result adopts; with another, it conflicts. */
export function settleEffect(ctx: StoreContext, fence: Fence, req: SettleEffect): Transition<EffectState> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return settleStoppedSession(ctx, fence, req) ?? conflict(row);
    const effect = ctx.selectRow("effects", "WHERE effect_id = ?", req.effectId);
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
    updateRun(
      ctx,
      row,
      {},
      {
        type: result.ok ? "effect.settled" : "effect.failed",
        path: effect.path,
        visit: effect.visit,
        data: { effectType: effect.effect_type },
      },
      { progress: true },
    );
    return applied({ status: "settled", effectId: req.effectId, result });
  });
}
