import { type ClockReason, isClockReason, type RecoveryReason } from "@piw/protocol";

/** A due time as every surface shows it: `2026-12-01 18:30:05 UTC`, the same on any machine. */
export function formatDueTime(at: number): string {
  return `${new Date(at).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** What a run parked on the clock is doing: `waiting until …`, or `attempt n of m at …`. */
export function clockWords(reason: ClockReason): string {
  switch (reason.code) {
    case "waiting":
      return `waiting until ${formatDueTime(reason.until)}`;
    case "retry_waiting":
      return `attempt ${reason.attempt} of ${reason.attempts} at ${formatDueTime(reason.at)} (after ${reason.lastError})`;
    default:
      return reason satisfies never;
  }
}

/**
 * Why a run is parked, in the words `piw status`, `piw list`, the viewer and the Pi widget all use:
 * the clock's own words for a wait or a retry pause, else the saved message and its code.
 */
export function recoveryWords(reason: RecoveryReason): string {
  return isClockReason(reason) ? clockWords(reason) : `${reason.message} (${reason.code})`;
}
