import { AGENT_SESSION_EFFECT } from "@piw/protocol";
import type { StoreContext } from "./context.js";

/**
 * How many isolated attempts of one agent step visit may end with their worker lost mid-step (a
 * crash, a kill) before the run parks with `agent_attempts_exhausted` instead of being relaunched.
 * Each attempt is a new model call, so a worker that dies on every one must not loop for ever.
 */
export const AGENT_ATTEMPTS_MAX = 3;

/** The open visit's isolated attempts whose worker was lost mid-step, and the step's path. */
export interface LostAgentAttempts {
  path: string;
  count: number;
}

/**
 * The isolated attempts of the run's open visits that ended with no record: an attempt reserves its
 * `agent.session` record when it opens and settles it on every end its worker lives through (done,
 * failed, its deadline, a cancel), so a record still reserved is an attempt whose worker was lost.
 */
export function lostAgentAttempts(ctx: StoreContext, runId: string): LostAgentAttempts | null {
  const row = ctx
    .stmt(
      `SELECT e.path AS path, COUNT(*) AS count FROM effects e
       JOIN run_steps s ON s.run_id = e.run_id AND s.path = e.path AND s.visit = e.visit
       WHERE e.run_id = ? AND e.effect_type = ? AND e.status = 'reserved' AND s.status = 'running'
       GROUP BY e.path, e.visit ORDER BY count DESC LIMIT 1`,
    )
    .get(runId, AGENT_SESSION_EFFECT) as { path: string; count: number } | undefined;
  return row ?? null;
}
