import { WorkflowError } from "piw";
import { z } from "zod";

// The pure part of monitor: what one check saw, and what the loop does next. No I/O here, so every
// rule of the loop is tested without a run.

/** An earlier node's output, read back with the schema it was saved under. */
export function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success) throw new WorkflowError("monitor: an earlier step's output has an unexpected shape.");
  return result.data;
}

/** Most repairs in one run (autoimplement's count too): each new failure gets one, and a run that keeps breaking stops. */
export const MAX_REPAIRS = 3;
/** Checks kept in the loop's state, newest last, for the final report. */
const HISTORY_MAX = 20;
const TEXT_MAX = 600;

/** What a check saw: the goal met, not yet, or something failing that a repair could fix. */
export const observationSchema = z.object({
  source: z.enum(["check", "inspector"]),
  goal: z.enum(["met", "pending", "failing"]),
  summary: z.string().max(TEXT_MAX),
  /** A short stable name of the failure, compared across checks; null unless failing. */
  failure: z.string().max(200).nullable(),
  /** Why `stopWhen` holds; null when it does not (or there is none). */
  stop: z.string().max(TEXT_MAX).nullable(),
  /** The inspector's proposal; a check command proposes nothing. */
  next: z.enum(["wait", "act", "repair", "implement"]).nullable(),
  /** The one step to take for act or repair, in the inspector's words. */
  action: z.string().max(2000).nullable(),
  /** The end of what the check command printed, for the repair step. */
  output: z.string().max(4000).nullable(),
});
export type Observation = z.infer<typeof observationSchema>;

const ENDINGS = ["met", "stop_when", "max_checks", "deadline", "repeated_failure", "not_allowed"] as const;
export type Ending = (typeof ENDINGS)[number];

const DECISIONS = ["met", "wait", "act", "repair", "implement", "stop"] as const;
type Decision = (typeof DECISIONS)[number];

const historyEntrySchema = z.object({
  check: z.number().int().min(1),
  at: z.string(),
  goal: observationSchema.shape.goal,
  decision: z.enum(DECISIONS),
  summary: z.string().max(TEXT_MAX),
});

/** The loop's state after a check: the decide step's output, read back by its next visit. */
export const monitorStateSchema = z.object({
  check: z.number().int().min(1),
  decision: z.enum(DECISIONS),
  reason: z.string().max(TEXT_MAX),
  ending: z.enum(ENDINGS).nullable(),
  /** When the next check is due (ISO), for a wait; null otherwise. */
  nextCheckAt: z.string().nullable(),
  /** The latest the run can end at: the deadline, or the time of its last allowed check. */
  endsBy: z.string().nullable(),
  repairs: z.number().int().min(0),
  /** The failure the latest repair was for, until a check no longer fails. */
  repaired: z.string().nullable(),
  history: z.array(historyEntrySchema).max(HISTORY_MAX),
});
export type MonitorState = z.infer<typeof monitorStateSchema>;

/** What the input lets the loop do, as the decision needs it. */
export interface Limits {
  everyMs: number;
  maxChecks: number;
  /** Epoch ms, or null for none. */
  deadline: number | null;
  allowAct: boolean;
  allowRepair: boolean;
  /** Repairing a code defect through autoimplement, on a branch of its own. */
  allowImplement: boolean;
}

const clip = (text: string, max = TEXT_MAX): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;
const iso = (ms: number): string => new Date(ms).toISOString();

type Verdict = { decision: Decision; ending: Ending | null; reason: string };

function verdictOf(prev: MonitorState | null, seen: Observation, limits: Limits): Verdict {
  if (seen.goal === "met")
    return { decision: "met", ending: "met", reason: seen.summary || "The goal is met." };
  if (seen.stop !== null)
    return { decision: "stop", ending: "stop_when", reason: `stopWhen holds: ${seen.stop}` };
  if (seen.goal === "failing") {
    const failure = seen.failure ?? "the check failed";
    if (prev?.repaired === failure) {
      return {
        decision: "stop",
        ending: "repeated_failure",
        reason: `The same failure came back after a repair: ${failure}`,
      };
    }
    if (!limits.allowRepair && !limits.allowImplement) {
      return {
        decision: "stop",
        ending: "not_allowed",
        reason: `Failing (${failure}) and repair is not allowed.`,
      };
    }
    if ((prev?.repairs ?? 0) >= MAX_REPAIRS) {
      return {
        decision: "stop",
        ending: "repeated_failure",
        reason: `Failing (${failure}) after ${MAX_REPAIRS} repairs of other failures.`,
      };
    }
    // The inspector judges a code defect that needs more than one step; without repair, only implement is left.
    const implement = limits.allowImplement && (seen.next === "implement" || !limits.allowRepair);
    return { decision: implement ? "implement" : "repair", ending: null, reason: `Failing: ${failure}` };
  }
  if (seen.next === "act" && limits.allowAct) {
    return { decision: "act", ending: null, reason: seen.action ?? seen.summary };
  }
  if (seen.next === "repair" && limits.allowRepair && (prev?.repairs ?? 0) < MAX_REPAIRS) {
    return { decision: "repair", ending: null, reason: seen.action ?? seen.summary };
  }
  return { decision: "wait", ending: null, reason: seen.summary || "Not met yet." };
}

/**
 * The loop's next step after check number `prev.check + 1`. The goal and `stopWhen` end it first;
 * a failure gets one repair, and the same failure seen again after it stops the loop with the reason
 * instead of repairing forever. Whatever is not an ending then meets the bounds: the last allowed
 * check or a deadline already passed ends the loop rather than acting with no check left to verify.
 */
export function decideNext(
  prev: MonitorState | null,
  seen: Observation,
  limits: Limits,
  now: number,
): MonitorState {
  const check = (prev?.check ?? 0) + 1;
  let { decision, ending, reason } = verdictOf(prev, seen, limits);
  if (ending === null && check >= limits.maxChecks) {
    decision = "stop";
    ending = "max_checks";
    reason = `Not met after ${check} check${check === 1 ? "" : "s"} (maxChecks): ${reason}`;
  } else if (ending === null && limits.deadline !== null && now >= limits.deadline) {
    decision = "stop";
    ending = "deadline";
    reason = `Not met by the deadline ${iso(limits.deadline)}: ${reason}`;
  }
  const nextAt = decision === "wait" ? nextCheckAt(now, limits) : null;
  const repairing = decision === "repair" || decision === "implement";
  const entry = { check, at: iso(now), goal: seen.goal, decision, summary: clip(seen.summary) };
  return {
    check,
    decision,
    reason: clip(reason),
    ending,
    nextCheckAt: nextAt === null ? null : iso(nextAt),
    endsBy: ending === null ? iso(endsBy(check, now, limits)) : null,
    repairs: (prev?.repairs ?? 0) + (repairing ? 1 : 0),
    // A repair remembers its failure until a check no longer fails, so only a failure that comes
    // straight back counts as repeated.
    repaired: repairing
      ? (seen.failure ?? "the check failed")
      : seen.goal === "failing"
        ? (prev?.repaired ?? null)
        : null,
    history: [...(prev?.history ?? []), entry].slice(-HISTORY_MAX),
  };
}

/** The next check's due time: one interval on, but never past the deadline. */
export function nextCheckAt(now: number, limits: Limits): number {
  const next = now + limits.everyMs;
  return limits.deadline === null ? next : Math.min(next, limits.deadline);
}

/** The latest the loop can end: the deadline, or when its remaining checks are spent at one per interval. */
export function endsBy(check: number, now: number, limits: Limits): number {
  const lastCheck = now + Math.max(0, limits.maxChecks - check) * limits.everyMs;
  return limits.deadline === null ? lastCheck : Math.min(lastCheck, limits.deadline);
}

/** The failure of a check command as a stable name: its exit code and the last line it printed. */
export function commandFailure(exitCode: number | null, stdout: string, stderr: string): string {
  const lines = `${stdout}\n${stderr}`.split("\n").map((line) => line.trim());
  const last = lines.filter((line) => line !== "").at(-1);
  const how = exitCode === null ? "no exit code" : `exit ${exitCode}`;
  return clip(last === undefined ? how : `${how}: ${last}`, 200);
}

/** The end of a command's output: where a failing command says why. */
export function outputTail(stdout: string, stderr: string, max = 4000): string {
  const text = [stdout, stderr].filter((part) => part.trim() !== "").join("\n");
  return text.length > max ? `…${text.slice(text.length - max + 1)}` : text;
}
