import {
  addSpend,
  type Budget,
  type BudgetLimit,
  type BudgetSpend,
  budgetExceededMessage,
  type RecoveryReason,
  reachedLimit,
  type WorkerParams,
} from "@piw/protocol";

/** What a budget check answers: the budget, the spend with what the check reports pending, the limit reached. */
interface BudgetAnswer {
  budget: Budget | null;
  spend: BudgetSpend;
  reached: BudgetLimit | null;
}

/**
 * The store's budget check, for the in-memory port: the answer, or (a limit reached, and the check may
 * park) the reason the run parks for.
 */
export function budgetVerdict(
  budget: Budget | null,
  saved: BudgetSpend,
  req: WorkerParams<"budget.check">,
): { kind: "answer"; answer: BudgetAnswer } | { kind: "park"; reason: RecoveryReason } {
  const spend = addSpend(saved, req.pending);
  const limit = budget === null ? null : reachedLimit(budget, spend, req.when);
  if (budget === null || limit === null || req.askOnly === true) {
    return { kind: "answer", answer: { budget, spend, reached: limit } };
  }
  const reason: RecoveryReason = {
    code: "budget_exceeded",
    message: budgetExceededMessage(limit, budget, spend),
    path: req.path,
    limit,
    spent: spend,
    budget,
  };
  return { kind: "park", reason };
}
