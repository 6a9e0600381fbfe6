import { type HistoryEvent, type RunHistory, type TraceEventInput, traceEventSchema } from "@piw/protocol";

let seq = 0;

/** A trace event, checked against the protocol's schema; `at` counts up from 1,000 in steps of 100. */
export function event(trace: TraceEventInput): HistoryEvent {
  seq += 1;
  return { seq, at: 1_000 + seq * 100, ...traceEventSchema.parse(trace) };
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
