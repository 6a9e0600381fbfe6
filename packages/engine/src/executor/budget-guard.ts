import {
  addSpend,
  type Budget,
  type BudgetLimit,
  type BudgetSpend,
  budgetExceededMessage,
  reachedLimit,
  type RecoveryReason,
} from "@piw/protocol";
import type { IsolatedUsage } from "./agent-session.js";

/**
 * The budget of an isolated session, decided in the worker: the run's spend when the step started
 * (the store's answer) plus what the session used since. Deciding here, in the session's own reply
 * handler, is what stops it before its next model call; the store then parks the run from the saved
 * record. The host's answer to each reply adds what the run's other live sessions spent meanwhile
 * (parallel branches), so the run's limit holds for all of them together.
 */
export class BudgetGuard {
  private live: IsolatedUsage = { tokens: 0, usd: 0, turns: 0 };
  /** The limit the run's live spend reached, as the host last answered (other sessions' use counted). */
  runReached: BudgetLimit | null = null;
  private readonly startedAt = Date.now();

  constructor(
    private readonly budget: Budget | null,
    private readonly base: BudgetSpend,
  ) {}

  /** The session's usage so far (it only grows). */
  record(usage: IsolatedUsage): void {
    this.live = usage;
  }

  /** The session's usage the store has not saved yet. */
  pending(): Partial<BudgetSpend> {
    return { tokens: this.live.tokens, usd: this.live.usd, agentTurns: this.live.turns };
  }

  spend(): BudgetSpend {
    return addSpend(this.base, {
      tokens: this.live.tokens,
      usd: this.live.usd,
      agentTurns: this.live.turns,
      wallMs: Date.now() - this.startedAt,
    });
  }

  reached(when: "before_turn" | "during_turn"): BudgetLimit | null {
    return this.budget === null ? null : reachedLimit(this.budget, this.spend(), when);
  }

  /** The park reason for `limit`, when the store did not park the run itself. */
  reason(path: string, limit: BudgetLimit): RecoveryReason {
    const budget = this.budget ?? {};
    const spent = this.spend();
    return {
      code: "budget_exceeded",
      message: budgetExceededMessage(limit, budget, spent),
      path,
      limit,
      spent,
      budget,
    };
  }
}
