import {
  AGENT_SESSION_EFFECT,
  adopted,
  applied,
  type Budget,
  type BudgetLimit,
  type BudgetSpend,
  budgetVerdict,
  budgetSchema,
  canonicalJson,
  conflict,
  type EffectState,
  type Fence,
  mergeBudget,
  NO_SPEND,
  addSpend,
  type RecoveryReason,
  recoveryRequired,
  type RunRecord,
  type SettleEffect,
  type Transition,
  type TurnUsage,
  type WorkerParams,
} from "@piw/protocol";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import { mapRunRow, type RunRow } from "./rows.js";
import { parkRow } from "./run-recovery.js";
import { updateRun } from "./run-writes.js";
import { turnByRequest } from "./turns.js";

/** The run's budget and what it has spent. */
export interface BudgetState {
  budget: Budget | null;
  spend: BudgetSpend;
}

function budgetOf(row: Pick<RunRow, "budget_json">): Budget | null {
  if (row.budget_json === null) return null;
  const parsed = budgetSchema.safeParse(JSON.parse(row.budget_json));
  return parsed.success ? parsed.data : null;
}

/** The numbers of a saved isolated session record; anything else in it is not spend. */
function sessionSpend(value: unknown): Partial<BudgetSpend> {
  if (typeof value !== "object" || value === null) return {};
  const r = value as { tokensIn?: unknown; tokensOut?: unknown; cost?: unknown; turns?: unknown };
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  return {
    tokens: Math.round(num(r.tokensIn) + num(r.tokensOut)),
    usd: num(r.cost),
    // A record from before turns were counted ran at least its prompt.
    agentTurns: typeof r.turns === "number" ? Math.round(num(r.turns)) : 1,
  };
}

/**
 * What a run has spent, from saved facts only: its Pi conversation turns (their reported usage, one
 * agent turn each), its settled isolated session records, and its execution time, counted like the
 * deadline clock: the time its workers ran (a launch orphaned by a dead host counts to its last
 * heartbeat), never the time it stood parked or queued.
 */
function readRunSpend(ctx: StoreContext, runId: string): BudgetSpend {
  const turns = ctx
    .stmt(
      "SELECT COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(usd), 0) AS usd FROM turns WHERE run_id = ? AND status != 'unowned'",
    )
    .get(runId) as { n: number; tokens: number; usd: number };
  let spend = addSpend(NO_SPEND, { agentTurns: turns.n, tokens: turns.tokens, usd: turns.usd });
  const sessions = ctx
    .stmt(
      "SELECT result_hash FROM effects WHERE run_id = ? AND effect_type = ? AND status = 'settled' AND result_hash IS NOT NULL",
    )
    .all(runId, AGENT_SESSION_EFFECT) as { result_hash: string }[];
  for (const session of sessions)
    spend = addSpend(spend, sessionSpend(ctx.readJsonBlob(session.result_hash)));
  const wall = ctx
    .stmt(
      `SELECT COALESCE(SUM(MAX(0, CASE
         WHEN exit_kind = 'orphaned' THEN COALESCE(alive_at, started_at)
         ELSE COALESCE(ended_at, ?) END - started_at)), 0) AS ms
       FROM worker_launches WHERE run_id = ?`,
    )
    .get(ctx.now(), runId) as { ms: number };
  return { ...spend, wallMs: wall.ms };
}

export function readBudgetState(ctx: StoreContext, runId: string): BudgetState | null {
  const row = ctx.getRunRow(runId);
  return row === undefined ? null : { budget: budgetOf(row), spend: readRunSpend(ctx, runId) };
}

/** The budget park that ended `fence`'s claim, when that is the run's last change of state. */
function budgetParkOf(ctx: StoreContext, fence: Fence): RecoveryReason | null {
  const current = ctx.getRunRow(fence.runId);
  if (current?.status !== "parked" || current.generation !== fence.generation + 1) return null;
  const saved =
    current.recovery_reason === null ? null : (JSON.parse(current.recovery_reason) as RecoveryReason);
  return saved?.code === "budget_exceeded" ? saved : null;
}

/**
 * The record of an isolated session that a budget park stopped, sent under the claim the park ended:
 * when one parallel branch parks the run at its limit, the other branches' sessions are closed after
 * it, and what they spent must still count against the budget. Only a reserved `agent.session`
 * record of that run is written; anything else answers null (the caller's conflict stands).
 */
export function settleStoppedSession(
  ctx: StoreContext,
  fence: Fence,
  req: SettleEffect,
): Transition<EffectState> | null {
  if (!req.result.ok || budgetParkOf(ctx, fence) === null) return null;
  const effect = ctx.selectRow("effects", "WHERE effect_id = ?", req.effectId);
  if (effect?.run_id !== fence.runId || effect.effect_type !== AGENT_SESSION_EFFECT) return null;
  if (effect.status !== "reserved") return null;
  ctx
    .stmt("UPDATE effects SET status = 'settled', result_hash = ?, settled_at = ? WHERE effect_id = ?")
    .run(ctx.putJson(req.result.value), ctx.now(), req.effectId);
  return applied({ status: "settled", effectId: req.effectId, result: req.result });
}

/**
 * The budget check of an agent step (the worker's `budget.check`): before a turn starts and while one
 * runs. Within budget it answers the state; at a limit it parks the run with `budget_exceeded` in the
 * same transaction (the visit stays open, its turns end as lost), and answers `recoveryRequired`.
 * A repeat after that park gets the same answer.
 */
export function checkBudget(
  ctx: StoreContext,
  fence: Fence,
  req: WorkerParams<"budget.check">,
): Transition<BudgetState & { reached: BudgetLimit | null }> {
  return ctx.tx(() => {
    const parked = budgetParkOf(ctx, fence);
    if (parked !== null) return recoveryRequired(parked);
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status !== "running") return conflict(notRunning(row));
    const verdict = budgetVerdict(budgetOf(row), readRunSpend(ctx, row.run_id), req);
    if (verdict.kind === "answer") return applied(verdict.answer);
    const { reason } = verdict;
    parkRow(ctx, row, reason);
    return recoveryRequired(reason);
  });
}

/**
 * A Pi session's usage of its open workflow turn so far. Usage only grows: a late or repeated report
 * never lowers what was saved. Returns the turn's run and its budget state, or null for a turn no run
 * owns.
 */
export function recordTurnUsage(
  ctx: StoreContext,
  req: TurnUsage,
): Transition<(BudgetState & { runId: string; path: string | null; visit: number | null }) | null> {
  return ctx.tx(() => {
    const turn = turnByRequest(ctx, req);
    if (!turn) return conflict({ kind: "not_found", resource: "turn", id: req.requestId });
    if (turn.run_id === null) return applied(null);
    const tokens = Math.max(turn.tokens, req.tokens);
    const usd = Math.max(turn.usd, req.usd);
    const changed = tokens !== turn.tokens || usd !== turn.usd;
    if (changed)
      ctx.stmt("UPDATE turns SET tokens = ?, usd = ? WHERE turn_id = ?").run(tokens, usd, turn.turn_id);
    const state = readBudgetState(ctx, turn.run_id);
    if (state === null) return conflict({ kind: "not_found", resource: "run", id: turn.run_id });
    const value = { ...state, runId: turn.run_id, path: turn.path, visit: turn.visit };
    return changed ? applied(value) : adopted(value);
  });
}

/**
 * Put a resume's limits in place of the saved ones, on a run that is not running (a budget-parked
 * run is the case this is for). The same budget again adopts.
 */
export function raiseBudget(
  ctx: StoreContext,
  req: { runId: string; budget: Budget },
): Transition<RunRecord> {
  return ctx.tx(() => {
    const row = ctx.getRunRow(req.runId);
    if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
    const merged = mergeBudget(budgetOf(row), req.budget);
    const json = merged === null ? null : canonicalJson(merged);
    if (json === row.budget_json) return adopted(mapRunRow(row));
    if (row.status !== "parked" && row.status !== "queued") {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "parked or queued",
        actual: row.status,
      });
    }
    updateRun(ctx, row, { budget_json: json }, { type: "run.budget_raised" });
    return applied(mapRunRow(row));
  });
}
