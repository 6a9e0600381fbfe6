import { formatBudgetSpend, type RunView } from "@piw/protocol";

/**
 * What a run has spent against its budget, for every view (`budget cost $0.40/$2.00 · tokens
 * 120k/500k`); empty for a run without a budget or a view built without it.
 */
export function budgetWords(view: Pick<RunView, "budget" | "spend">): string {
  if (view.budget == null || view.spend === undefined) return "";
  const spent = formatBudgetSpend(view.budget, view.spend);
  return spent === "" ? "" : `budget ${spent}`;
}
