import type { Conflict } from "@piw/protocol";
import type { StoreContext } from "./context.js";

// One-reservation rule: a Pi session holds at most one queued, starting or running run, and a new run does not
// cut in before the last run's presentation turn reached the session.

/** The run that holds a session's reservation, if any. */
export function activeRunInSession(ctx: StoreContext, sessionId: string): string | undefined {
  const row = ctx
    .stmt(
      "SELECT run_id FROM runs WHERE origin_session = ? AND status IN ('queued', 'starting', 'running') LIMIT 1",
    )
    .get(sessionId) as { run_id: string } | undefined;
  return row?.run_id;
}

/** A run of the session whose presentation follow-up has not reached the session yet. */
function pendingPresentationInSession(ctx: StoreContext, sessionId: string): string | undefined {
  const row = ctx
    .stmt(
      "SELECT run_id FROM messages WHERE session_id = ? AND kind = 'presentation' AND status IN ('pending', 'claimed') LIMIT 1",
    )
    .get(sessionId) as { run_id: string } | undefined;
  return row?.run_id;
}

/** Why the session cannot take another run now (one reservation; no cutting into a presentation). */
export function sessionRefusal(ctx: StoreContext, sessionId: string): Conflict | undefined {
  const active = activeRunInSession(ctx, sessionId);
  if (active) return { kind: "session_busy", sessionId, activeRunId: active };
  const presenting = pendingPresentationInSession(ctx, sessionId);
  if (presenting) return { kind: "presentation_pending", sessionId, runId: presenting };
  return undefined;
}
