import { z } from "zod";
import { nodePathSchema, opaqueIdSchema, visitNumberSchema } from "./ids.js";
import { oneLine, oneLineSchema } from "./one-line.js";

/** The longest progress message a view carries (characters, the ellipsis included). */
export const PROGRESS_MESSAGE_MAX_CHARS = 200;

/**
 * What running code last said about its progress: how much is done of how much (either may be
 * unknown) and one line of text. The author wrote the text; piw bounds it and shows it as given.
 */
export interface ProgressState {
  done: number | null;
  total: number | null;
  message: string | null;
  /** The author's own estimate of when the work ends at the latest (epoch ms); absent when not given. */
  eta?: number;
  /**
   * `run`: the progress of the whole run, not only of this step. It stays on view after the step
   * ends, while the run waits (parked), until a newer run-wide report replaces it or the run ends.
   */
  scope?: "run";
}

const UPDATE_FIELDS = ["done", "total", "message", "eta", "scope"] as const;
/** `text` as one line (`oneLine`), cut to the limit; null if nothing is left. */
export function boundProgressMessage(text: string): string | null {
  const line = oneLine(text, PROGRESS_MESSAGE_MAX_CHARS);
  return line === "" ? null : line;
}

/** A field name safe to repeat in an error: code-like, short. Anything else is not named. */
function fieldName(key: string): string {
  return /^[A-Za-z_$][\w$]{0,31}$/.test(key) ? `"${key}"` : "a field";
}

/** An update's `eta`: a Date or epoch milliseconds; undefined when it is not one. */
function etaOf(value: unknown): number | null | undefined {
  if (value === null) return null;
  const at = value instanceof Date ? value.getTime() : value;
  return typeof at === "number" && Number.isFinite(at) && at >= 0 ? Math.round(at) : undefined;
}

function amountProblem(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) return `${name} must be a finite number or null`;
  if (value < 0) return `${name} must not be negative`;
  return null;
}

const base = (previous: ProgressState | null): ProgressState =>
  previous ?? { done: null, total: null, message: null };

/**
 * Check an update against the visit's previous state and give the state it makes. Each field the
 * update names replaces the previous value (`null` clears it); a field it leaves out keeps it.
 * Refused: not an object, a field other than done/total/message/eta/scope, an amount that is not a
 * finite number >= 0, an eta that is not a Date or epoch ms, a scope other than step/run, a message
 * that is not a string, or done greater than total once merged. The problem names fields,
 * never values.
 */
export function applyProgressUpdate(
  previous: ProgressState | null,
  raw: unknown,
): { ok: true; state: ProgressState } | { ok: false; problem: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, problem: "a progress update is an object with done, total and/or message" };
  }
  const update = raw as Record<string, unknown>;
  for (const key of Object.keys(update)) {
    if (!(UPDATE_FIELDS as readonly string[]).includes(key)) {
      return {
        ok: false,
        problem: `${fieldName(key)} is not a progress field (use done, total, message, eta, scope)`,
      };
    }
  }
  const problem = amountProblem("done", update.done) ?? amountProblem("total", update.total);
  if (problem !== null) return { ok: false, problem };
  const { message } = update;
  if (message !== undefined && message !== null && typeof message !== "string") {
    return { ok: false, problem: "message must be a string or null" };
  }
  const was = base(previous);
  const eta = update.eta === undefined ? was.eta : etaOf(update.eta);
  if (eta === undefined && update.eta !== undefined) {
    return { ok: false, problem: "eta must be a Date, epoch milliseconds or null" };
  }
  const { scope } = update;
  if (scope !== undefined && scope !== "step" && scope !== "run") {
    return { ok: false, problem: 'scope must be "step" or "run"' };
  }
  const run = scope === undefined ? was.scope === "run" : scope === "run";
  const state: ProgressState = {
    done: update.done === undefined ? was.done : (update.done as number | null),
    total: update.total === undefined ? was.total : (update.total as number | null),
    message: message === undefined ? was.message : message === null ? null : boundProgressMessage(message),
    ...(eta === null || eta === undefined ? {} : { eta }),
    ...(run ? { scope: "run" as const } : {}),
  };
  if (state.done !== null && state.total !== null && state.done > state.total) {
    return { ok: false, problem: "done must not be greater than total" };
  }
  return { ok: true, state };
}

const amountSchema = z.number().min(0).nullable();

/** A progress state as it crosses a process boundary: already checked, checked again at the frame. */
const progressStateSchema = z
  .object({
    done: amountSchema,
    total: amountSchema,
    message: oneLineSchema(PROGRESS_MESSAGE_MAX_CHARS).nullable(),
    eta: z.number().int().min(0).optional(),
    scope: z.literal("run").optional(),
  })
  .refine((s) => s.done === null || s.total === null || s.done <= s.total, "done must not exceed total");

/** The progress of one attempt of one node visit, as a worker reports it (`node.progress`). */
export const nodeProgressReportSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  attempt: z.number().int().min(1),
  state: progressStateSchema,
});
export type NodeProgressReport = z.infer<typeof nodeProgressReportSchema>;

/** A model's `update` from its conversation: the host ties it to the session's open step turn. */
export const turnProgressSchema = z.object({
  sessionId: opaqueIdSchema,
  update: z.record(z.string(), z.unknown()),
});
