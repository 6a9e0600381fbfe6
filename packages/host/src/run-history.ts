import type { JsonValue, RunHistory } from "@piw/protocol";
import type { RunStore } from "@piw/store";

export type HistoryReader = Pick<RunStore, "getRun" | "listRunEvents" | "readRunHistory">;

/** The most trace events one reply carries; older ones are counted, not sent. */
const MAX_HISTORY_EVENTS = 5_000;
/** Characters all folded values of one reply may take together, well inside one protocol frame. */
const VALUE_BUDGET = 512 * 1024;
const MIN_VALUE_CHARS = 256;

/**
 * Bounds a JSON value to about `budget` characters, keeping its shape: a long string is cut, and
 * whatever no longer fits in an array or object is replaced by a note saying how much was left out.
 */
export function foldJson(value: JsonValue, budget: number): JsonValue {
  let left = budget;
  const fold = (item: JsonValue): JsonValue => {
    if (typeof item === "string") {
      if (item.length <= Math.max(16, left)) {
        left -= item.length;
        return item;
      }
      const keep = Math.max(16, left);
      left = 0;
      return `${item.slice(0, keep)}… (${item.length - keep} more characters)`;
    }
    if (item === null || typeof item !== "object") {
      left -= 8;
      return item;
    }
    if (Array.isArray(item)) {
      const out: JsonValue[] = [];
      for (let i = 0; i < item.length; i += 1) {
        if (left <= 0) {
          out.push(`… ${item.length - i} more items`);
          break;
        }
        out.push(fold(item[i] as JsonValue));
      }
      return out;
    }
    const out: Record<string, JsonValue> = {};
    const entries = Object.entries(item);
    for (let i = 0; i < entries.length; i += 1) {
      const [key, child] = entries[i] as [string, JsonValue];
      if (left <= 0) {
        out["…"] = `${entries.length - i} more keys`;
        break;
      }
      left -= key.length;
      out[key] = fold(child);
    }
    return out;
  };
  return fold(value);
}

function foldText(text: string, budget: number): string {
  return text.length <= budget ? text : `${text.slice(0, budget)}… (${text.length - budget} more characters)`;
}

/** `runs.history`: the run's trace and inspector data, every value bounded; null for an unknown run. */
export function readRunHistoryView(reader: HistoryReader, runId: string): RunHistory | null {
  const run = reader.getRun(runId);
  if (!run) return null;
  const records = reader.readRunHistory(runId);
  const events: RunHistory["events"] = [];
  let omitted = 0;
  for (let after = 0; ; ) {
    const page = reader.listRunEvents(runId, after, 10_000);
    for (const { runId: _run, revision: _revision, ...event } of page) events.push(event);
    if (events.length > MAX_HISTORY_EVENTS) {
      omitted += events.length - MAX_HISTORY_EVENTS;
      events.splice(0, events.length - MAX_HISTORY_EVENTS);
    }
    const last = page.at(-1);
    if (page.length < 10_000 || last === undefined) break;
    after = last.seq;
  }
  const values = records.steps.length + 3 * records.effects.length + records.messages.length + 1;
  const each = Math.max(MIN_VALUE_CHARS, Math.floor(VALUE_BUDGET / values));
  return {
    runId,
    revision: run.revision,
    events,
    eventsOmitted: omitted,
    steps: records.steps.map((step) => ({
      ...step,
      error: step.error === null ? null : foldText(step.error, each),
      output: step.output === null ? null : foldJson(step.output, each),
    })),
    effects: records.effects.map((effect) => ({
      ...effect,
      request: foldJson(effect.request, each),
      result: effect.result === null ? null : foldJson(effect.result, each),
      error: effect.error === null ? null : foldText(effect.error, each),
    })),
    messages: records.messages.map((message) => ({ ...message, body: foldText(message.body, each) })),
    turns: records.turns,
  };
}
