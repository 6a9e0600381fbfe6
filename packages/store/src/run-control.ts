import { type Conflict, isAllowedTransition, type RecoveryReason } from "@piw/protocol";
import type { RunRow } from "./rows.js";

/** What a person (or the model) may ask of a run from outside it. */
export type RunControlAction = "resume" | "answer" | "cancel";

/**
 * The one rule for "may this run be resumed, answered or cancelled now", checked inside the
 * transaction that makes the change: the run, or the conflict that refuses it. Callers (the host)
 * forward the request and report the conflict.
 * Resume: only a parked run, and not one parked at a manual effect a person must settle first.
 * Answer: only a run that ended waiting at a checkpoint. Cancel: any run not already ended.
 */
export function controllableRun(
  runId: string,
  row: RunRow | undefined,
  action: RunControlAction,
): RunRow | Conflict {
  if (!row) return { kind: "not_found", resource: "run", id: runId };
  switch (action) {
    case "resume": {
      if (row.status !== "parked") {
        return { kind: "state_mismatch", resource: "run", id: runId, expected: "parked", actual: row.status };
      }
      const reason =
        row.recovery_reason === null ? null : (JSON.parse(row.recovery_reason) as RecoveryReason);
      // Resuming would only park again at the same effect: a person must settle it first.
      if (reason?.code === "manual_effect_unsettled") {
        return {
          kind: "state_mismatch",
          resource: "effect",
          id: reason.effectId,
          expected: "settled by a person (piw resume --happened or --not-happened)",
          actual: "reserved and unsettled",
        };
      }
      return row;
    }
    case "answer":
      return row.status === "done" && row.outcome === "waiting"
        ? row
        : {
            kind: "parent_not_eligible",
            parentRunId: runId,
            status: row.status,
            outcome: row.outcome,
            requires: "waiting",
          };
    case "cancel":
      return isAllowedTransition(row.status, "cancelled")
        ? row
        : { kind: "invalid_transition", runId, from: row.status, to: "cancelled" };
    default:
      return action satisfies never;
  }
}
