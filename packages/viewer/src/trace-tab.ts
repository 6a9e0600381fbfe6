import type { HistoryEvent, RunHistory } from "@piw/protocol";
import { formatDuration } from "./format.js";
import type { Glyphs } from "./glyphs.js";
import { clipToWidth } from "./text-width.js";
import type { Theme } from "./theme.js";

/** Which events the trace tab lists: the chosen node's, or the whole run's. */
type TraceScope = "node" | "run";

export interface TraceOptions {
  width: number;
  theme: Theme;
  glyphs: Glyphs;
  /** The node the `node` scope keeps. */
  focus: string | null;
  scope: TraceScope;
  /** The replay cursor (an index into `history.events`); null is live, at the last event. */
  position: number | null;
}

/** What a tab drew, and the line the pane keeps in view before any scrolling (the cursor). */
export interface TabLines {
  lines: string[];
  anchor: number;
}

/** An event's data as `key=value` words: every field of the vocabulary is a short fact, never input. */
function dataWords(event: HistoryEvent): string {
  const data: object | null = event.data;
  if (data === null) return "";
  return Object.entries(data)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
}

/**
 * The run's trace, one event a line: when (from the first event), which event, where, its facts.
 * The replay cursor's event is marked, and what comes after it is dimmed: not happened yet.
 */
export function renderTrace(history: RunHistory | null, options: TraceOptions): TabLines {
  const { theme, glyphs: g, width } = options;
  if (history === null) return { lines: [theme("dim", `loading the run's trace${g.ellipsis}`)], anchor: 0 };
  const cursor = options.position ?? history.events.length - 1;
  const first = history.events[0]?.at ?? 0;
  const scoped = options.scope === "node" && options.focus !== null;
  const lines = [
    theme(
      "dim",
      scoped
        ? `events of ${options.focus}  (a: every event of the run)`
        : "every event of the run  (a: only the chosen node's)",
    ),
  ];
  if (history.eventsOmitted > 0) lines.push(theme("dim", `${history.eventsOmitted} earlier events not kept`));
  let anchor = lines.length - 1;
  history.events.forEach((event, i) => {
    if (scoped && event.path !== options.focus) return;
    const where =
      event.path === null ? "" : ` ${event.path}${event.visit === null ? "" : ` #${event.visit}`}`;
    const words = dataWords(event);
    const mark = i === cursor ? g.chosen : " ";
    const text = `${mark} +${formatDuration(event.at - first).padEnd(6)} ${event.type}${where}${words === "" ? "" : `  ${words}`}`;
    const line = clipToWidth(text, width, g.ellipsis);
    if (i <= cursor) anchor = lines.length;
    lines.push(i === cursor ? theme("bold", line) : i > cursor ? theme("dim", line) : line);
  });
  if (lines.length === 1) lines.push(theme("dim", "no events for this node yet"));
  return { lines, anchor };
}
