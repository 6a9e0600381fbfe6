import { z } from "zod";
import { DAY_MS, SEVEN_DAYS_MS } from "./durations.js";
import { jsonValueSchema, runIdSchema } from "./ids.js";
import { runStatusSchema, terminalOutcomeSchema } from "./run-status.js";
import { runEnvSchema } from "./run-env.js";
import { safeErrorSchema } from "./safe-error.js";

/** A schedule's name: what `piw schedule pause <name>` and a scheduled run's origin say. */
export const scheduleIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[a-z0-9][a-z0-9._-]*$/,
    "lowercase letters, digits, '.', '_' and '-', starting with a letter or digit",
  );

/** What a firing does while an earlier run of the same schedule is still active. */
export const overlapPolicySchema = z.enum(["skip", "buffer-one", "cancel-previous", "allow"]);

/** Which firings missed while no host ran are made up once it runs again (within the window). */
export const catchUpPolicySchema = z.enum(["none", "latest", "all"]);

/** Firings that fell due while no host ran, no older than this, count as on time under `none`. */
export const SCHEDULE_ON_TIME_MS = 60_000;
/** The longest catch-up window and jitter a schedule may have. */
export const SCHEDULE_MAX_WINDOW_MS = SEVEN_DAYS_MS;
/** The shortest `--every`: one second. */
export const SCHEDULE_MIN_EVERY_MS = 1000;
/** After this many failed firings in a row a schedule pauses itself, with the last reason. */
export const SCHEDULE_MAX_FAILURES = 5;

const scheduleTimingSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("every"),
    everyMs: z
      .number()
      .int()
      .min(SCHEDULE_MIN_EVERY_MS)
      .max(366 * DAY_MS),
  }),
  z.object({
    kind: z.literal("cron"),
    /** Five fields: minute hour day-of-month month day-of-week. */
    expression: z.string().min(1).max(200),
    /** An IANA time zone; absent: UTC. */
    timeZone: z.string().min(1).max(100).optional(),
  }),
]);
export type ScheduleTiming = z.infer<typeof scheduleTimingSchema>;

/** A new schedule as a client asks for it; the host checks the timing and saves it. */
export const addScheduleSchema = z.object({
  scheduleId: scheduleIdSchema,
  /** A workflow name or a path to a `<name>.workflow.ts` file, resolved in `workingDir` at each firing. */
  workflowRef: z.string().min(1).max(4096),
  workingDir: z.string().min(1).max(4096),
  task: z
    .string()
    .max(64 * 1024)
    .optional(),
  input: jsonValueSchema.optional(),
  /** The environment the runs' commands get (saved privately, like a run's). */
  env: runEnvSchema.optional(),
  timing: scheduleTimingSchema,
  overlap: overlapPolicySchema,
  catchUp: catchUpPolicySchema,
  catchUpWindowMs: z.number().int().min(0).max(SCHEDULE_MAX_WINDOW_MS),
  jitterMs: z.number().int().min(0).max(SCHEDULE_MAX_WINDOW_MS),
  /** No firing after this time (epoch ms). */
  untilAt: z.number().int().positive().optional(),
});
export type AddSchedule = z.infer<typeof addScheduleSchema>;

const firingOutcomeSchema = z.enum(["started", "skipped", "buffered", "missed", "failed"]);

/** A schedule as every view shows it. */
export const scheduleRecordSchema = z.object({
  scheduleId: scheduleIdSchema,
  workflowRef: z.string(),
  workingDir: z.string(),
  timing: scheduleTimingSchema,
  overlap: overlapPolicySchema,
  catchUp: catchUpPolicySchema,
  catchUpWindowMs: z.number().int(),
  jitterMs: z.number().int(),
  untilAt: z.number().int().nullable(),
  /** The next scheduled time, and when it fires (with its jitter); null: the schedule has ended. */
  nextFor: z.number().int().nullable(),
  nextAt: z.number().int().nullable(),
  paused: z.boolean(),
  pauseReason: z.enum(["user", "failures"]).nullable(),
  pauseNote: z.string().nullable(),
  bufferedFor: z.number().int().nullable(),
  failures: z.number().int(),
  lastFiring: z
    .object({
      scheduledFor: z.number().int(),
      at: z.number().int(),
      outcome: firingOutcomeSchema,
      runId: runIdSchema.nullable(),
      /** The run's status and outcome now, when the firing started one that still exists. */
      runStatus: runStatusSchema.nullable(),
      runOutcome: terminalOutcomeSchema.nullable(),
      error: safeErrorSchema.nullable(),
    })
    .nullable(),
  createdAt: z.number().int(),
  revision: z.number().int(),
});
export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: DAY_MS,
};

/** `30s`, `30m`, `2h`, `1d`, `500ms` in milliseconds; null when it is not such a duration. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  const unit = match?.[2] === undefined ? undefined : DURATION_UNITS[match[2]];
  if (match?.[1] === undefined || unit === undefined) return null;
  return Math.round(Number(match[1]) * unit);
}
