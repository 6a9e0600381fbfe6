import type { RecoveryReason } from "./transition.js";

/**
 * How long before a run's due time the host's clock wakes it, so that its worker is started and its
 * workflow loaded when the time comes; the woken wait or retry sleeps in its worker for the rest.
 */
export const WAKE_LEAD_MS = 2_000;

/** The park reasons the host's clock wakes: a wait node, or the pause between retry attempts. */
export type ClockReason = Extract<RecoveryReason, { code: "waiting" | "retry_waiting" }>;

export function isClockReason(reason: RecoveryReason | null | undefined): reason is ClockReason {
  return reason?.code === "waiting" || reason?.code === "retry_waiting";
}

/** When a clock reason is due (epoch ms); null for every other reason, which only a person resumes. */
export function clockDueAt(reason: RecoveryReason | null | undefined): number | null {
  if (!isClockReason(reason)) return null;
  return reason.code === "waiting" ? reason.until : reason.at;
}
