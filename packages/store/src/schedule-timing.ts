import { createHash } from "node:crypto";
import { SCHEDULE_ON_TIME_MS, type ScheduleTiming } from "@piw/protocol";
import { Cron } from "croner";

// When a schedule fires: `every` times are whole intervals from the schedule's anchor; cron times come
// from croner (five fields, in the schedule's IANA time zone, UTC when none). A local time that does not
// exist on a spring-forward day fires once, at the first minute after the gap; one that repeats on a
// fall-back day fires once, at its first occurrence.

export type TimingCheck = { ok: true } | { ok: false; problem: string };

/** Whether a timing can fire at all: a cron expression croner reads and a time zone this Node knows. */
export function checkTiming(timing: ScheduleTiming): TimingCheck {
  if (timing.kind === "every") return { ok: true };
  if (timing.timeZone !== undefined && !knownTimeZone(timing.timeZone)) {
    return { ok: false, problem: "unknown time zone (use an IANA name such as Europe/Berlin)" };
  }
  try {
    cronOf(timing.expression, timing.timeZone);
    return { ok: true };
  } catch {
    return {
      ok: false,
      problem: "not a cron expression of five fields (minute hour day-of-month month day-of-week)",
    };
  }
}

function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timeZone: string | undefined): Cron {
  return new Cron(expression, { paused: true, mode: "5-part", ...(timeZone ? { timezone: timeZone } : {}) });
}

/** The schedule's first time strictly after `after` (epoch ms), or null when there is none. */
export function nextTimeAfter(timing: ScheduleTiming, anchorAt: number, after: number): number | null {
  if (timing.kind === "every") {
    if (after < anchorAt) return anchorAt;
    return anchorAt + (Math.floor((after - anchorAt) / timing.everyMs) + 1) * timing.everyMs;
  }
  const next = cronOf(timing.expression, timing.timeZone).nextRun(new Date(after));
  return next === null ? null : next.getTime();
}

/**
 * A scheduled time's jitter: a fixed delay in [0, jitterMs] derived from the schedule and the time, so
 * that a host restarted mid-wait fires it at the same moment and many schedules spread out.
 */
export function jitterFor(scheduleId: string, scheduledFor: number, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  const digest = createHash("sha256").update(`${scheduleId}\n${scheduledFor}`).digest();
  return digest.readUInt32BE(0) % (jitterMs + 1);
}

/** Which due time a firing at `now` is for, given the catch-up policy; none: every due time was missed. */
export type CatchUpChoice = { kind: "fire"; scheduledFor: number } | { kind: "missed"; resumeAfter: number };

/** The most due times one catch-up decision looks at (a 7-day window of minutely cron times fits). */
const MAX_CATCH_UP_STEPS = 20_000;

/**
 * The catch-up rule: of the due times from `nextFor` up to `now`, those older than the window are missed;
 * `all` fires the oldest left (the rest fire in turn), `latest` and `none` only the newest (`none`'s
 * window is SCHEDULE_ON_TIME_MS: a firing late by more than that was missed).
 */
export function chooseFiring(
  spec: { timing: ScheduleTiming; anchorAt: number; catchUp: "none" | "latest" | "all"; windowMs: number },
  nextFor: number,
  now: number,
): CatchUpChoice {
  const windowMs = spec.catchUp === "none" ? SCHEDULE_ON_TIME_MS : spec.windowMs;
  const oldest = now - windowMs;
  let candidate: number | null =
    nextFor >= oldest ? nextFor : nextTimeAfter(spec.timing, spec.anchorAt, oldest - 1);
  if (candidate === null || candidate > now) return { kind: "missed", resumeAfter: now };
  if (spec.catchUp === "all") return { kind: "fire", scheduledFor: candidate };
  if (spec.timing.kind === "every") {
    const steps = Math.floor((now - candidate) / spec.timing.everyMs);
    return { kind: "fire", scheduledFor: candidate + steps * spec.timing.everyMs };
  }
  for (let step = 0; step < MAX_CATCH_UP_STEPS; step += 1) {
    const after: number | null = nextTimeAfter(spec.timing, spec.anchorAt, candidate);
    if (after === null || after > now) break;
    candidate = after;
  }
  return { kind: "fire", scheduledFor: candidate };
}
