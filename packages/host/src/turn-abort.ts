import type { RunRecord, RunRecordOf, TurnAbort, TurnRecord } from "@piw/protocol";
import type { RunReader, StepRecord } from "@piw/store";

type TurnStep = Pick<StepRecord, "path" | "visit" | "status" | "timeoutMs" | "errorCode">;

/**
 * Why the open Pi turn of a step must stop now, or null while its step may still take the model's
 * work. The host alone decides this, from saved state: the extension aborts the turn it is told to,
 * and a late submit is refused with the same reason.
 */
export function turnStopReason(
  run:
    | (Pick<RunRecord, "runId" | "status" | "paused"> &
        Partial<Pick<RunRecordOf<"parked">, "recoveryReason">>)
    | null,
  turn: Pick<TurnRecord, "path" | "visit">,
  steps: readonly TurnStep[],
): string | null {
  if (turn.path === null || turn.visit === null) return null;
  if (run === null) return `Its run is gone; step ${turn.path} is over.`;
  const step = steps.find((s) => s.path === turn.path && s.visit === turn.visit);
  if (step?.status === "timed_out") {
    const length = step.timeoutMs === null ? "" : ` after ${step.timeoutMs} ms`;
    return `Step ${turn.path} timed out${length}.`;
  }
  if (run.status === "cancelled") return `Run ${run.runId} was cancelled; step ${turn.path} is over.`;
  // Its parallel branch was cancelled once the join was decided: the step takes no more work.
  if (step?.status === "failed" && step.errorCode === "cancelled") {
    return `Step ${turn.path} was cancelled: its parallel branch is no longer needed.`;
  }
  if (run.status === "parked" && run.recoveryReason?.code === "budget_exceeded") {
    return `Run ${run.runId} reached its budget during step ${turn.path}.`;
  }
  if (run.paused || run.status === "parked") return `Run ${run.runId} was paused during step ${turn.path}.`;
  // A step that took its output (or failed on its own) leaves the model's turn alone: it was told to end it.
  if (run.status === "queued" || run.status === "starting") {
    // `queued`/`starting`: the worker lost its claim; the relaunched step prompts again.
    return `Run ${run.runId} is ${run.status}; step ${turn.path} stopped.`;
  }
  return null;
}

/**
 * The turn of `run` that must be aborted, if any: what its view carries to the run's session. A run
 * that ended settles its open turns as lost in the store, while Pi may still be running one: that
 * turn is a candidate too. The extension aborts only the agent run it knows by the request ID.
 */
export function turnToAbort(
  reader: Pick<RunReader, "listOpenTurns" | "latestSettledTurn">,
  run: RunRecord,
  steps: readonly TurnStep[],
): TurnAbort | null {
  const open = reader.listOpenTurns(run.runId);
  const settled = open.length === 0 ? reader.latestSettledTurn(run.runId) : null;
  for (const turn of settled ? [settled] : open) {
    const reason = turnStopReason(run, turn, steps);
    if (reason !== null) return { turnId: turn.turnId, requestId: turn.requestId, reason };
  }
  return null;
}
