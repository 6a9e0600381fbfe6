/** A day in milliseconds: the one spelling of it, for every limit and unit given in days. */
export const DAY_MS = 24 * 60 * 60_000;

/**
 * The longest wait piw keeps for one thing: a node's deadline or retry pause, a schedule's catch-up
 * window or jitter. Longer waits belong to a checkpoint.
 */
export const SEVEN_DAYS_MS = 7 * DAY_MS;
