import type { Budget, BudgetLimit, BudgetSpend } from "./budget.js";
import type { RecoveryReason } from "./transition.js";

// Budget arithmetic and words, with no zod: the quick `piw list` route and the views load this
// module without the protocol's schemas.

/** The limits in the order every view names them. */
export const BUDGET_LIMITS: readonly BudgetLimit[] = ["usd", "tokens", "agentTurns", "wallMs"];

export const NO_SPEND: BudgetSpend = { usd: 0, tokens: 0, agentTurns: 0, wallMs: 0 };

export function addSpend(a: BudgetSpend, b: Partial<BudgetSpend>): BudgetSpend {
  return {
    usd: a.usd + (b.usd ?? 0),
    tokens: a.tokens + (b.tokens ?? 0),
    agentTurns: a.agentTurns + (b.agentTurns ?? 0),
    wallMs: a.wallMs + (b.wallMs ?? 0),
  };
}

/**
 * The first limit `spend` has reached. Before a turn starts every limit counts, agent turns too (one
 * more would pass it); while a turn runs, its own turn is already counted, so only money, tokens and
 * time stop it.
 */
export function reachedLimit(
  budget: Budget,
  spend: BudgetSpend,
  when: "before_turn" | "during_turn",
): BudgetLimit | null {
  for (const limit of BUDGET_LIMITS) {
    const max = budget[limit];
    if (max === undefined) continue;
    if (limit === "agentTurns" && when === "during_turn") continue;
    if (spend[limit] >= max) return limit;
  }
  return null;
}

/** A saved budget with the limits of `raise` put in place of its own (a resume's `--budget`). */
export function mergeBudget(saved: Budget | null, raise: Budget | undefined): Budget | null {
  if (raise === undefined) return saved;
  return { ...(saved ?? {}), ...raise };
}

/** One limit as people read it: `$1.20`, `120k`, `4`, `2m30s`. */
function formatBudgetValue(limit: BudgetLimit, value: number): string {
  switch (limit) {
    case "usd":
      return `$${value.toFixed(value < 10 ? 2 : 0)}`;
    case "tokens":
      return value >= 1e6 ? `${trim(value / 1e6)}M` : value >= 1e3 ? `${trim(value / 1e3)}k` : String(value);
    case "agentTurns":
      return String(value);
    case "wallMs":
      return formatMs(value);
    default:
      return limit satisfies never;
  }
}

function trim(value: number): string {
  return value.toFixed(value < 10 ? 1 : 0).replace(/\.0$/, "");
}

function formatMs(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 === 0 ? "" : `${seconds % 60}s`}`;
  return `${Math.floor(minutes / 60)}h${minutes % 60 === 0 ? "" : `${minutes % 60}m`}`;
}

const LIMIT_WORDS: Readonly<Record<BudgetLimit, string>> = {
  usd: "cost",
  tokens: "tokens",
  agentTurns: "agent turns",
  wallMs: "time",
};

/** Spend against each set limit, for views: `cost $0.40/$2.00 · tokens 120k/500k`. */
export function formatBudgetSpend(budget: Budget, spend: BudgetSpend): string {
  const parts: string[] = [];
  for (const limit of BUDGET_LIMITS) {
    const max = budget[limit];
    if (max === undefined) continue;
    parts.push(
      `${LIMIT_WORDS[limit]} ${formatBudgetValue(limit, spend[limit])}/${formatBudgetValue(limit, max)}`,
    );
  }
  return parts.join(" · ");
}

/** The park message of a run that reached `limit`: what it spent, against what. */
export function budgetExceededMessage(limit: BudgetLimit, budget: Budget, spend: BudgetSpend): string {
  const max = budget[limit] ?? 0;
  return `Budget reached: ${LIMIT_WORDS[limit]} ${formatBudgetValue(limit, spend[limit])} of ${formatBudgetValue(limit, max)} (${formatBudgetSpend(budget, spend)}); resume with a higher --budget to go on.`;
}

/** What a budget check answers: the budget, the spend with what the check reports pending, the limit reached. */
interface BudgetAnswer {
  budget: Budget | null;
  spend: BudgetSpend;
  reached: BudgetLimit | null;
}

/**
 * A budget check against `saved` spend (the store's, and the in-memory port's): the answer, or, when a
 * limit is reached and the check may park, the reason the run parks for.
 */
export function budgetVerdict(
  budget: Budget | null,
  saved: BudgetSpend,
  req: {
    path: string;
    when: "before_turn" | "during_turn";
    pending: Partial<BudgetSpend>;
    askOnly?: boolean | undefined;
  },
): { kind: "answer"; answer: BudgetAnswer } | { kind: "park"; reason: RecoveryReason } {
  const spend = addSpend(saved, req.pending);
  const limit = budget === null ? null : reachedLimit(budget, spend, req.when);
  if (budget === null || limit === null || req.askOnly === true) {
    return { kind: "answer", answer: { budget, spend, reached: limit } };
  }
  const message = budgetExceededMessage(limit, budget, spend);
  return {
    kind: "park",
    reason: { code: "budget_exceeded", message, path: req.path, limit, spent: spend, budget },
  };
}
