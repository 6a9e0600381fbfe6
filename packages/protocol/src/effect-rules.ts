import { canonicalJson } from "./canonical-json.js";
import type { ReserveEffect } from "./run-records.js";
import type { RecoveryReason } from "./transition.js";

// Rules of visits and effects that the store applies durably and the engine's in-memory port
// (MemoryRunPort) applies to a run kept in memory: written once, here.

/** Why a run parks at a node boundary when a pause was asked for. */
export const PAUSED_AT_NODE_BOUNDARY: Extract<RecoveryReason, { code: "paused" }> = {
  code: "paused",
  message: "Paused at a node boundary by request.",
};

/**
 * Why a run parks when a manual effect is reserved again and was never settled: it may or may not
 * have happened, and only a person can tell.
 */
export function manualEffectUnsettled(
  effectType: string,
  effectId: string,
): Extract<RecoveryReason, { code: "manual_effect_unsettled" }> {
  return {
    code: "manual_effect_unsettled",
    message: `Manual effect ${effectType} was started but never settled; check whether it happened, then resume.`,
    effectId,
  };
}

/**
 * What two reservations of one effect identity are compared by: the same text adopts the saved
 * effect, another text is a conflict. Key order does not matter.
 */
export function effectRequestText(req: Pick<ReserveEffect, "effectType" | "mode" | "request">): string {
  return canonicalJson({ type: req.effectType, mode: req.mode, request: req.request });
}
