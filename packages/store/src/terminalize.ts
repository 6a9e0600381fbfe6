import { canonicalJson } from "@piw/protocol";
import type { RunStatus, SafeError, TerminalOutcome, TraceEventInput } from "@piw/protocol";
import { sha256 } from "./sha256.js";
import type { StoreContext } from "./context.js";
import { dropRunProgress } from "./node-progress.js";
import { clearedLaunchState, dropBlobIfUnreferenced } from "./private-launch-state.js";
import type { RunRow } from "./rows.js";
import { transitionRun } from "./run-writes.js";

/** The events that record a run's end. */
export type TerminalEvent = Extract<
  TraceEventInput,
  { type: "run.completed" | "run.waiting" | "run.failed" | "run.timed_out" | "run.cancelled" }
>;

export interface TerminalChange {
  status: Extract<RunStatus, "done" | "failed" | "cancelled">;
  outcome: TerminalOutcome;
  finalOutputHash?: string | null;
  error?: SafeError | null;
  /** Whether a terminal message or follow-up should later be created from the saved facts. */
  present: boolean;
  /** Where a waiting run stopped: the checkpoint a continuation answers. */
  cursor?: { path: string; visit: number };
  /** The model cancelled its own run: it knows, so no follow-up turn tells it. */
  cancelledByModel?: boolean;
  /** A waiting approval gate's deadline: the wake clock answers it then. */
  wakeAt?: number;
}

function terminalFingerprint(row: RunRow): string {
  return sha256(
    canonicalJson({
      runId: row.run_id,
      status: row.status,
      outcome: row.outcome,
      output: row.final_output_hash,
      errorCode: row.error_code,
      error: row.error_hash,
    }),
  );
}

/**
 * Commit a run's terminal control state in the caller's transaction: open turns end `lost`, pending
 * step prompts are cancelled (notifications stay to be delivered), the claim is released and the
 * terminal facts are saved. A launch that ends before it ran lets go of its private input here too.
 * Presentation is a later, separate step (the presentation-after-terminal rule).
 */
export function terminalize(
  ctx: StoreContext,
  row: RunRow,
  change: TerminalChange,
  event: TerminalEvent,
): number {
  const now = ctx.now();
  const errorHash = change.error ? ctx.putText(change.error.message) : null;
  const facts: RunRow = {
    ...row,
    status: change.status,
    outcome: change.outcome,
    final_output_hash: change.finalOutputHash ?? null,
    error_code: change.error?.code ?? null,
    error_hash: errorHash,
  };
  const presented = row.origin_kind === "pi" && change.present;
  const cleared = clearedLaunchState(row, change.status);
  const revision = transitionRun(
    ctx,
    row,
    change.status,
    {
      ...(change.cursor ? { cursor_path: change.cursor.path, cursor_visit: change.cursor.visit } : {}),
      outcome: change.outcome,
      final_output_hash: facts.final_output_hash,
      error_code: facts.error_code,
      error_hash: errorHash,
      claim_token: null,
      lease_expires_at: null,
      generation: row.generation + 1,
      paused: 0,
      recovery_reason: null,
      wake_at: change.wakeAt ?? null,
      terminal_fingerprint: terminalFingerprint(facts),
      presentation_state: presented ? "pending" : "none",
      ...(change.cancelledByModel === true ? { notify_model_cancel: 0 } : {}),
      finished_at: now,
      ...cleared.columns,
    },
    event,
  );
  for (const hash of cleared.blobs) dropBlobIfUnreferenced(ctx, hash);
  ctx
    .stmt("UPDATE turns SET status = 'lost', ended_at = ? WHERE run_id = ? AND status = 'open'")
    .run(now, row.run_id);
  // A step prompt asks for work the ended run no longer takes; a notification tells of something that
  // already happened, so it stays in the outbox and is still delivered, once.
  ctx
    .stmt(
      "UPDATE messages SET status = 'cancelled', claim_token = NULL, lease_expires_at = NULL WHERE run_id = ? AND kind = 'step_prompt' AND status IN ('pending', 'claimed')",
    )
    .run(row.run_id);
  dropRunProgress(ctx, row.run_id);
  return revision;
}
