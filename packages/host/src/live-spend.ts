import { addSpend, type BudgetSpend, NO_SPEND } from "@piw/protocol";

/**
 * The unsaved usage of one worker's live isolated sessions, as they reported it with each model
 * reply (an isolated session's record is saved only when it ends). The host adds it to the run's
 * saved spend for every budget check, so parallel branches stop at the run's limit together rather
 * than each at its own. It lives with its worker: a superseded or gone worker's sessions count no more.
 */
export class LiveSpend {
  /** Each live session's usage so far, by its record's effect ID. */
  private readonly sessions = new Map<string, Partial<BudgetSpend>>();

  /** A session's usage so far (it only grows): it replaces the session's last report. */
  report(session: string, usage: Partial<BudgetSpend>): void {
    this.sessions.set(session, usage);
  }

  /** The session's record is saved now (or was refused): its usage counts from the store from here. */
  saved(session: string): void {
    this.sessions.delete(session);
  }

  /** Every session's usage not saved yet, summed. */
  pending(): BudgetSpend {
    let sum = NO_SPEND;
    for (const usage of this.sessions.values()) sum = addSpend(sum, usage);
    return sum;
  }

  clear(): void {
    this.sessions.clear();
  }
}
