import { z } from "zod";

/** The most a budget limit may be: large enough for any real run, small enough to stay exact in JSON. */
const LIMIT_MAX = 1e12;

/**
 * What one run may spend before the host parks it (`budget_exceeded`): dollars and tokens as the
 * model reports them, agent turns (each prompt, reminder or retry an agent step sends the model), and
 * execution time in ms (counted like a deadline: a parked run's time does not count).
 */
export const budgetSchema = z
  .object({
    usd: z.number().positive().max(LIMIT_MAX).optional(),
    tokens: z.number().int().positive().max(LIMIT_MAX).optional(),
    agentTurns: z.number().int().positive().max(LIMIT_MAX).optional(),
    wallMs: z.number().int().positive().max(LIMIT_MAX).optional(),
  })
  .strict();
export type Budget = z.infer<typeof budgetSchema>;
export type BudgetLimit = keyof Budget;

/** What a run has spent so far, from its saved agent steps and turns (and, while one runs, its live usage). */
export const budgetSpendSchema = z.object({
  usd: z.number().min(0),
  tokens: z.number().int().min(0),
  agentTurns: z.number().int().min(0),
  wallMs: z.number().int().min(0),
});
export type BudgetSpend = z.infer<typeof budgetSpendSchema>;
