import { z } from "zod";

/** Lifecycle of a run (the status-table rule). `parked` holds a run that needs a person or a relaunch. */
export const runStatusSchema = z.enum([
  "queued",
  "starting",
  "running",
  "parked",
  "done",
  "failed",
  "cancelled",
]);
export type RunStatus = z.infer<typeof runStatusSchema>;

/** How a terminal run ended. `done` carries completed or waiting; `failed` carries failed or timed_out. */
export const terminalOutcomeSchema = z.enum(["completed", "waiting", "failed", "timed_out", "cancelled"]);
export type TerminalOutcome = z.infer<typeof terminalOutcomeSchema>;

/**
 * What a visit still open in a run that stopped shows, in the run's view and its history alike: why
 * the run stopped (`cancelled`, `timed_out`, or `paused` for a paused run), else `pending` for any
 * other stopped run (it failed, finished or parked with the visit unfinished: nothing is running it).
 * Null while the run is queued, starting or running: then only the host knows whether a worker or a
 * turn is on it (the view says `running` or `pending`, the history `running`).
 */
export function stoppedVisitState(run: {
  status: RunStatus;
  outcome?: TerminalOutcome | null;
  paused: boolean;
}): "cancelled" | "timed_out" | "paused" | "pending" | null {
  if (run.outcome === "cancelled" || run.status === "cancelled") return "cancelled";
  if (run.outcome === "timed_out") return "timed_out";
  if (run.status === "parked" && run.paused) return "paused";
  if (!isActiveStatus(run.status)) return "pending";
  return null;
}

/** The statuses that hold the one-per-session reservation. */
export const ACTIVE_STATUSES = ["queued", "starting", "running"] as const satisfies readonly RunStatus[];
export type ActiveStatus = (typeof ACTIVE_STATUSES)[number];

/** The statuses a run never leaves: it ended with an outcome. */
const TERMINAL_STATUSES = ["done", "failed", "cancelled"] as const satisfies readonly RunStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/** The statuses of a run that has not ended: active, or parked until a resume or its wake-up. */
export const LIVE_STATUSES = [...ACTIVE_STATUSES, "parked"] as const satisfies readonly RunStatus[];

export function isTerminalStatus(status: RunStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly RunStatus[]).includes(status);
}

export function isActiveStatus(status: RunStatus): status is ActiveStatus {
  return (ACTIVE_STATUSES as readonly RunStatus[]).includes(status);
}

/**
 * The only lifecycle edges a run may take (the status-table rule). The store refuses every other change.
 * `starting -> queued` is the expired-lease recovery of a command that never ran; `starting -> parked`
 * holds a launch whose worker vanished before it accepted its command (the progress rule: no progress parks;
 * the never-ran rule: a run with saved state is reconciled through run recovery); `parked -> starting` is an
 * explicit resume.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ["starting", "cancelled"],
  starting: ["running", "parked", "failed", "cancelled", "queued"],
  running: ["parked", "done", "failed", "cancelled"],
  parked: ["starting", "cancelled"],
  done: [],
  failed: [],
  cancelled: [],
};

export function isAllowedTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** The command that created a run row. `resume` never creates a row: it reuses one. */
export const runOriginCommandSchema = z.enum(["start", "continue", "restart"]);

/**
 * Where a run was started from: a Pi session (which it reserves), the CLI, or a schedule's firing
 * (which names the schedule and the time it fired for; such runs belong to the user, not a session).
 */
export const runOriginSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("pi"), sessionId: z.string().min(1).max(200) }),
  z.object({ kind: z.literal("cli") }),
  z.object({
    kind: z.literal("schedule"),
    scheduleId: z.string().min(1).max(64),
    scheduledFor: z.number().int(),
  }),
]);
export type RunOrigin = z.infer<typeof runOriginSchema>;
