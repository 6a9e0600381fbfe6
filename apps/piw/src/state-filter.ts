import type { RunStatus, TerminalOutcome } from "@piw/protocol";
import { usageError } from "./cli-error.js";

/** What one word given to `piw list --status` selects: runs in a status, or runs that ended so. */
type StateMatch = { status: RunStatus } | { outcome: TerminalOutcome };

/**
 * Every state word piw prints (the run state words, with `timed out` also written `timed_out` or
 * `timed-out`), and the stored status `done`. A word people see in the table finds those runs.
 */
const STATE_WORDS: Readonly<Record<string, StateMatch>> = {
  queued: { status: "queued" },
  starting: { status: "starting" },
  running: { status: "running" },
  parked: { status: "parked" },
  done: { status: "done" },
  completed: { outcome: "completed" },
  waiting: { outcome: "waiting" },
  failed: { outcome: "failed" },
  timed_out: { outcome: "timed_out" },
  "timed-out": { outcome: "timed_out" },
  "timed out": { outcome: "timed_out" },
  cancelled: { status: "cancelled" },
};

export const ACCEPTED_STATE_WORDS: readonly string[] = Object.keys(STATE_WORDS).filter(
  (word) => word !== "timed-out" && word !== "timed out",
);

export interface StateFilter {
  statuses: RunStatus[];
  outcomes: TerminalOutcome[];
}

/** `--status` values (repeated or comma-separated) as the host's filter; an unknown word is refused. */
export function parseStateFilter(raw: readonly string[], command: string): StateFilter {
  const filter: StateFilter = { statuses: [], outcomes: [] };
  for (const word of raw.flatMap((s) => s.split(",")).map((s) => s.trim().toLowerCase())) {
    if (word === "") continue;
    const match = Object.hasOwn(STATE_WORDS, word) ? STATE_WORDS[word] : undefined;
    if (match === undefined) {
      throw usageError(
        `unknown status ${JSON.stringify(word)}; use ${ACCEPTED_STATE_WORDS.join(", ")}`,
        command,
      );
    }
    if ("status" in match) {
      if (!filter.statuses.includes(match.status)) filter.statuses.push(match.status);
    } else if (!filter.outcomes.includes(match.outcome)) filter.outcomes.push(match.outcome);
  }
  return filter;
}
