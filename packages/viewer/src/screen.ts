import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { RunView } from "@piw/protocol";
import { formatDuration } from "./format.js";
import { renderGraph } from "./graph.js";
import { layoutGraph } from "./graph-layout.js";
import { renderInspector } from "./inspector.js";
import { describeEvent, historyAt, replayView } from "./replay.js";
import { filterRuns, renderRunTable } from "./run-list.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { focusPath, type OpenRun, type ViewerState } from "./viewer-state.js";
import { RUN_GLYPHS, RUN_TINTS, runStateWord } from "./words.js";

export interface ScreenSize {
  width: number;
  height: number;
}

export interface ScreenOptions extends ScreenSize {
  now: number;
  theme?: Theme;
}

/** Below this the graph cannot be drawn; the viewer says so instead. */
export const MIN_SCREEN: ScreenSize = { width: 40, height: 10 };

/** The keys, as `?` lists them and docs/viewer.md shows them. */
export const KEY_MAP: ReadonlyArray<{ keys: string; where: string; does: string }> = [
  { keys: "↑ ↓  k j", where: "list", does: "choose a run" },
  { keys: "enter", where: "list", does: "open the run" },
  { keys: "tab", where: "list", does: "cycle the status filter" },
  { keys: "↑ ↓  k j", where: "run", does: "choose a node (stops following)" },
  { keys: "← →  h l", where: "run", does: "replay: step back / forward through the recorded events" },
  { keys: "home end", where: "run", does: "replay: first event / back to live" },
  { keys: "enter  i", where: "run", does: "open or close the inspector of the chosen node" },
  { keys: "f", where: "run", does: "follow the active node live again" },
  { keys: "pgup pgdn  wheel", where: "run", does: "scroll the graph or the inspector" },
  { keys: "esc  backspace", where: "run", does: "close the inspector, then back to the list" },
  { keys: "?", where: "any", does: "show or hide this help" },
  { keys: "q  ctrl+c", where: "any", does: "quit" },
];

const LIST_FOOTER = "↑↓ choose  enter open  tab filter  ? help  q quit";
const RUN_FOOTER = "↑↓ node  ←→ replay  enter inspect  f follow  esc back  ? help  q quit";
const INSPECTOR_FOOTER = "↑↓ pgup pgdn scroll  ←→ replay  esc close  ? help  q quit";

function fitLines(lines: string[], width: number, height: number): string[] {
  const out = lines.slice(0, height).map((line) => clipToWidth(line, width, "…"));
  while (out.length < height) out.push("");
  return out;
}

function connectionLine(state: ViewerState, theme: Theme): string | undefined {
  switch (state.connection.kind) {
    case "connected":
      return undefined;
    case "reconnecting":
      return theme("yellow", `host went away (${state.connection.message}); reconnecting…`);
    case "unavailable":
      return theme("red", `host unavailable: ${state.connection.message}`);
    default:
      return state.connection satisfies never;
  }
}

function helpLines(width: number): string[] {
  const lines = ["keys", ""];
  const keyWidth = Math.max(...KEY_MAP.map((entry) => entry.keys.length));
  for (const entry of KEY_MAP) {
    lines.push(`  ${entry.keys.padEnd(keyWidth)}  ${entry.where.padEnd(4)}  ${entry.does}`);
  }
  lines.push("", "any key closes this help");
  return lines.map((line) => clipToWidth(line, width, "…"));
}

function listScreen(state: ViewerState, options: ScreenOptions, theme: Theme): string[] {
  const { width, height } = options;
  const runs = filterRuns(state.runs, state.filter);
  const head = theme("bold", `piw · runs · filter: ${state.filter} · ${runs.length} of ${state.runs.length}`);
  const status = connectionLine(state, theme) ?? (state.notice === null ? "" : theme("yellow", state.notice));
  const body = height - 3;
  let table: string[];
  if (runs.length === 0) {
    table = [
      theme(
        "dim",
        state.runs.length === 0 ? "no runs yet" : `no ${state.filter} runs (tab changes the filter)`,
      ),
    ];
  } else {
    const all = renderRunTable(runs, { width, selected: state.listIndex, now: options.now, theme });
    // Keep the chosen row in view: the header stays, the rows scroll.
    const rows = body - 1;
    const top = Math.max(0, Math.min(state.listIndex - Math.floor(rows / 2), runs.length - rows));
    table = [all[0] ?? "", ...all.slice(1 + top, 1 + top + rows)];
  }
  const middle = state.help ? helpLines(width) : table;
  return [head, status, ...fitLines(middle, width, body), theme("dim", LIST_FOOTER)];
}

function runHeader(view: RunView, now: number, theme: Theme): string {
  const word = runStateWord(view);
  const took =
    view.startedAt === null ? "" : ` · ${formatDuration((view.finishedAt ?? now) - view.startedAt)}`;
  const title = view.title === null ? view.workflowName : `${view.workflowName} (${view.title})`;
  return `${theme("bold", `piw · ${title}`)} · ${view.runId} · ${theme(RUN_TINTS[word], `${RUN_GLYPHS[word]} ${word}`)}${took}`;
}

function timelineLine(run: OpenRun, shown: RunView, focus: string | null, theme: Theme): string {
  const events = run.history?.events ?? [];
  if (run.replay !== null) {
    const event = events[run.replay];
    const first = events[0];
    const offset =
      event !== undefined && first !== undefined ? ` +${formatDuration(event.at - first.at)}` : "";
    const left = run.history?.eventsOmitted ?? 0;
    const omitted = left > 0 ? `  ${left} earlier events not kept` : "";
    return theme(
      "yellow",
      `◀ replay ${run.replay + 1}/${events.length}  ${event === undefined ? "" : describeEvent(event)}${offset}  (end: live)${omitted}`,
    );
  }
  const following = run.selected === null && (shown.status === "running" || shown.status === "starting");
  const at = focus === null ? "" : following ? `  following ${focus}` : `  at ${focus}`;
  const reason =
    shown.status === "parked" && shown.recoveryReason !== null
      ? theme("yellow", `  parked: ${shown.recoveryReason.message} (${shown.recoveryReason.code})`)
      : "";
  return `${theme("green", "● live")}${at}${reason}`;
}

function runScreen(state: ViewerState, run: OpenRun, options: ScreenOptions, theme: Theme): string[] {
  const { width, height } = options;
  const body = height - 3;
  const footer = theme("dim", run.inspector ? INSPECTOR_FOOTER : RUN_FOOTER);
  if (run.view === null) {
    const status = connectionLine(state, theme) ?? state.notice ?? `opening ${run.runId}…`;
    return [theme("bold", `piw · ${run.runId}`), status, ...fitLines([], width, body), footer];
  }
  const shown =
    run.replay !== null && run.history !== null ? replayView(run.view, run.history, run.replay) : run.view;
  const focus = focusPath(run, shown);
  const status = connectionLine(state, theme) ?? timelineLine(run, shown, focus, theme);
  // A replayed run is timed at its replay point, not at the wall clock.
  const at = run.replay === null ? options.now : (run.history?.events[run.replay]?.at ?? options.now);
  let middle: string[];
  if (state.help) {
    middle = helpLines(width);
  } else if (run.inspector && focus !== null) {
    const history =
      run.replay !== null && run.history !== null ? historyAt(run.history, run.replay) : run.history;
    const lines = renderInspector(shown, history, focus, { width, theme });
    const top = Math.max(0, Math.min(run.scroll, lines.length - body));
    middle = lines.slice(top, top + body);
  } else {
    const layout = layoutGraph(shown.manifest, shown.nodes);
    const card = layout.cards.find((c) => c.id === focus);
    // The focused card sits a third of the way down, moved by any scrolling, kept within the graph.
    const anchor = card === undefined ? 0 : card.top - Math.floor(body / 3);
    const top = Math.max(0, Math.min(anchor + run.scroll, layout.height - body));
    const rows = { top, height: body };
    middle = renderGraph(shown, { width, highlight: focus, now: at, theme, rows }, layout).lines;
  }
  return [runHeader(shown, at, theme), status, ...fitLines(middle, width, body), footer];
}

/** The whole terminal: exactly `height` lines, none wider than `width`. */
export function renderScreen(state: ViewerState, options: ScreenOptions): string[] {
  const theme = options.theme ?? plainTheme;
  const width = Math.max(1, Math.floor(options.width));
  const height = Math.max(1, Math.floor(options.height));
  let lines: string[];
  if (width < MIN_SCREEN.width || height < MIN_SCREEN.height) {
    lines = wrapTextWithAnsi(
      `terminal too small for the piw viewer: need ${MIN_SCREEN.width}×${MIN_SCREEN.height}, have ${width}×${height}. Enlarge the window, or press q to quit.`,
      width,
    );
  } else if (state.screen === "run" && state.run !== null) {
    lines = runScreen(state, state.run, { ...options, width, height }, theme);
  } else {
    lines = listScreen(state, { ...options, width, height }, theme);
  }
  return fitLines(lines, width, height).map((line) => clipToWidth(line, width, ""));
}

/** `piw view <runId> --once`: the run's header, its live line and the whole graph, for scripts. */
export function renderSnapshot(
  view: RunView,
  options: { width: number; now: number; theme?: Theme },
): string[] {
  const theme = options.theme ?? plainTheme;
  const run: OpenRun = {
    runId: view.runId,
    view,
    history: null,
    replay: null,
    selected: null,
    inspector: false,
    pending: null,
    scroll: 0,
  };
  const focus = focusPath(run, view);
  const graph = renderGraph(view, { width: options.width, highlight: focus, now: options.now, theme });
  return [runHeader(view, options.now, theme), timelineLine(run, view, focus, theme), "", ...graph.lines].map(
    (line) => clipToWidth(line, Math.max(1, options.width), "…"),
  );
}
