// Run statuses and the sets and edges between them, without zod: the CLI's quick list route and the
// viewer's words read these, and must not load a schema library to draw a run's state.

/** Lifecycle of a run (the status-table rule). `parked` holds a run that needs a person or a relaunch. */
export const RUN_STATUSES = [
  "queued",
  "starting",
  "running",
  "parked",
  "done",
  "failed",
  "cancelled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** How a terminal run ended. `done` carries completed or waiting; `failed` carries failed or timed_out. */
export const TERMINAL_OUTCOMES = ["completed", "waiting", "failed", "timed_out", "cancelled"] as const;
export type TerminalOutcome = (typeof TERMINAL_OUTCOMES)[number];

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
