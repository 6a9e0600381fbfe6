import {
  applied,
  conflict,
  type JsonValue,
  type RecoveryReason,
  type RunRecord,
  type Transition,
  canonicalJson,
} from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { mapRunRow } from "./rows.js";
import { updateRun } from "./run-writes.js";

/** What a person found out about a manual effect that a crash left unsettled. */
export type ManualEffectResolution =
  | { effectId: string; happened: true; value: JsonValue }
  | { effectId: string; happened: false };

function parkedReason(recovery: string | null): RecoveryReason | null {
  return recovery === null ? null : (JSON.parse(recovery) as RecoveryReason);
}

/**
 * Settle the manual effect a parked run stopped at, from a person's word: it happened (with the value
 * the action would have returned) or it did not (the reservation is dropped, so a resume performs it).
 * The run stays parked; resuming it is a separate, explicit step.
 */
export function resolveManualEffect(
  ctx: StoreContext,
  req: { runId: string } & ManualEffectResolution,
): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    const reason = parkedReason(row.recovery_reason);
    if (row.status !== "parked" || reason?.code !== "manual_effect_unsettled") {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "parked at an unsettled manual effect",
        actual: row.status === "parked" ? `parked (${reason?.code ?? "no reason"})` : row.status,
      });
    }
    if (reason.effectId !== req.effectId) {
      return conflict({ kind: "not_found", resource: "effect", id: req.effectId });
    }
    const effect = ctx.selectRow("effects", "WHERE effect_id = ?", req.effectId);
    if (effect?.run_id !== row.run_id || effect.mode !== "manual") {
      return conflict({ kind: "not_found", resource: "effect", id: req.effectId });
    }
    if (effect.status !== "reserved") {
      return conflict({
        kind: "state_mismatch",
        resource: "effect",
        id: req.effectId,
        expected: "reserved",
        actual: effect.status,
      });
    }
    if (req.happened) {
      ctx
        .stmt("UPDATE effects SET status = 'settled', result_hash = ?, settled_at = ? WHERE effect_id = ?")
        .run(ctx.putJson(req.value), ctx.now(), req.effectId);
    } else {
      ctx.stmt("DELETE FROM effects WHERE effect_id = ?").run(req.effectId);
    }
    const message = req.happened
      ? `Manual effect ${effect.effect_type} was confirmed as done by a person; resume the run to go on.`
      : `Manual effect ${effect.effect_type} was confirmed as not done; resume the run to perform it.`;
    updateRun(
      ctx,
      row,
      // Still parked, now only waiting for the explicit resume.
      { recovery_reason: canonicalJson({ code: "paused", message }), paused: 1 },
      {
        type: "effect.resolved",
        path: effect.path,
        visit: effect.visit,
        data: { effectId: req.effectId, happened: req.happened },
      },
    );
    return applied(mapRunRow(ctx.getRunRow(row.run_id) ?? row));
  });
}
