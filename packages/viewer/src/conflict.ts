import { type Conflict, isTerminalStatus } from "@piw/protocol";

/** One line saying why the host refused a change, in the user's terms. */
export function describeConflict(conflict: Conflict): string {
  switch (conflict.kind) {
    case "not_found":
      return `no ${conflict.resource} ${conflict.id}`;
    case "invalid_transition":
      return isTerminalStatus(conflict.from)
        ? `run ${conflict.runId} has already ended (${conflict.from}); it cannot become ${conflict.to}`
        : `run ${conflict.runId} is ${conflict.from}; it cannot become ${conflict.to}`;
    case "stale_fence":
    case "revision_mismatch":
      return `run ${conflict.runId} changed meanwhile; try again`;
    case "session_busy":
      return `Pi session ${conflict.sessionId} already has run ${conflict.activeRunId}`;
    case "presentation_pending":
      return `Pi session ${conflict.sessionId} has not yet presented run ${conflict.runId}; start again after that`;
    case "request_mismatch":
      return `${conflict.resource} ${conflict.id} was already saved with a different request`;
    case "state_mismatch":
      return `${conflict.resource} ${conflict.id} is ${conflict.actual}, not ${conflict.expected}`;
    case "parent_not_eligible": {
      const state = conflict.outcome ?? conflict.status;
      return conflict.requires === "waiting"
        ? `run ${conflict.parentRunId} is not waiting at a checkpoint (it is ${state})`
        : `run ${conflict.parentRunId} has not finished (it is ${state})`;
    }
    case "child_exists":
      return `run ${conflict.parentRunId} already went on as ${conflict.childRunId}; see piw status ${conflict.childRunId}`;
    case "input_cleared":
      return `run ${conflict.runId} ended before it started, and its input was cleared then; it cannot be restarted: start the workflow again with its input`;
    case "visit_not_open":
      return `node ${conflict.path} visit ${conflict.visit} of run ${conflict.runId} is not open`;
    default:
      return conflict satisfies never;
  }
}
