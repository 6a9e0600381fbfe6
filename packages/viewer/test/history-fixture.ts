import type { HistoryEvent, RunHistory } from "@piw/protocol";

let seq = 0;

/** A trace event; `at` counts up from 1,000 in steps of 100 unless given. */
export function event(
  type: string,
  path: string | null = null,
  visit: number | null = null,
  data: HistoryEvent["data"] = null,
): HistoryEvent {
  seq += 1;
  return { seq, type, path, visit, at: 1_000 + seq * 100, data };
}

export function historyOf(
  runId: string,
  events: HistoryEvent[],
  patch: Partial<RunHistory> = {},
): RunHistory {
  return {
    runId,
    revision: events.length,
    events,
    eventsOmitted: 0,
    steps: [],
    effects: [],
    messages: [],
    turns: [],
    ...patch,
  };
}
