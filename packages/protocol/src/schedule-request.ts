import type { JsonValue } from "./ids.js";
import type { RunEnv } from "./run-env-capture.js";
import {
  type AddSchedule,
  catchUpPolicySchema,
  overlapPolicySchema,
  parseDuration,
  SCHEDULE_MAX_WINDOW_MS,
  SCHEDULE_MIN_EVERY_MS,
  type ScheduleTiming,
  scheduleIdSchema,
} from "./schedules.js";

/** A schedule as a person or the model writes it (`piw schedule add`, `/workflow schedule add`, the tool). */
export interface ScheduleWords {
  name: string;
  workflowRef: string;
  workingDir: string;
  task?: string | undefined;
  input?: JsonValue | undefined;
  env?: RunEnv | undefined;
  every?: string | undefined;
  cron?: string | undefined;
  tz?: string | undefined;
  overlap?: string | undefined;
  catchUp?: string | undefined;
  catchUpWindow?: string | undefined;
  jitter?: string | undefined;
  until?: string | undefined;
}

/** The words checked into a request, or the first problem, naming the option (`every`, `cron`…). */
export type ScheduleRequestCheck = { ok: true; request: AddSchedule } | { ok: false; problem: string };

/** The default catch-up window: an hour. */
const DEFAULT_WINDOW_MS = 3_600_000;

function timingOf(words: ScheduleWords): ScheduleTiming | string {
  if (words.every !== undefined && words.cron !== undefined) return "give either every or cron, not both";
  if (words.every !== undefined) {
    if (words.tz !== undefined) return "tz goes with cron";
    const everyMs = parseDuration(words.every);
    if (everyMs === null) return "every takes a duration such as 30s, 30m, 2h or 1d";
    if (everyMs < SCHEDULE_MIN_EVERY_MS) return "every is at least 1s";
    return { kind: "every", everyMs };
  }
  if (words.cron !== undefined) {
    return {
      kind: "cron",
      expression: words.cron,
      ...(words.tz === undefined ? {} : { timeZone: words.tz }),
    };
  }
  return "a schedule needs every <duration> or cron <expr>";
}

function durationOr(text: string | undefined, fallback: number, what: string): number | string {
  if (text === undefined) return fallback;
  const ms = parseDuration(text);
  if (ms === null) return `${what} takes a duration such as 30s, 30m, 2h or 1d`;
  if (ms > SCHEDULE_MAX_WINDOW_MS) return `${what} is at most 7d`;
  return ms;
}

/**
 * Check a schedule's words into the host's request. The cron expression and time zone are checked by
 * the host (it owns the cron library); everything else here, so each surface says the same.
 */
export function scheduleRequest(words: ScheduleWords, now: number): ScheduleRequestCheck {
  const fail = (problem: string): ScheduleRequestCheck => ({ ok: false, problem });
  if (!scheduleIdSchema.safeParse(words.name).success) {
    return fail(
      "a schedule name is lowercase letters, digits, '.', '_' and '-', starting with a letter or digit",
    );
  }
  const timing = timingOf(words);
  if (typeof timing === "string") return fail(timing);
  const overlap = overlapPolicySchema.safeParse(words.overlap ?? "skip");
  if (!overlap.success) return fail("overlap is one of skip, buffer-one, cancel-previous or allow");
  const catchUp = catchUpPolicySchema.safeParse(words.catchUp ?? "latest");
  if (!catchUp.success) return fail("catch-up is one of none, latest or all");
  const window = durationOr(words.catchUpWindow, DEFAULT_WINDOW_MS, "catch-up-window");
  if (typeof window === "string") return fail(window);
  const jitter = durationOr(words.jitter, 0, "jitter");
  if (typeof jitter === "string") return fail(jitter);
  const untilAt = words.until === undefined ? undefined : Date.parse(words.until);
  if (untilAt !== undefined && (!Number.isFinite(untilAt) || untilAt <= now)) {
    return fail("until takes a time in the future, such as 2027-01-31T18:00:00Z");
  }
  return {
    ok: true,
    request: {
      scheduleId: words.name,
      workflowRef: words.workflowRef,
      workingDir: words.workingDir,
      ...(words.input !== undefined ? { input: words.input } : words.task ? { task: words.task } : {}),
      ...(words.env === undefined ? {} : { env: words.env }),
      timing,
      overlap: overlap.data,
      catchUp: catchUp.data,
      catchUpWindowMs: window,
      jitterMs: jitter,
      ...(untilAt === undefined ? {} : { untilAt }),
    },
  };
}

/** The default schedule name: the workflow's, from its name or file name. */
export function defaultScheduleName(workflowRef: string): string {
  const base = workflowRef.split("/").pop() ?? workflowRef;
  return base
    .replace(/\.workflow\.ts$/, "")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 64);
}
