import { visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { RunView } from "@piw/protocol";
import { detectGlyphs, type Glyphs } from "./glyphs.js";
import { graphLayoutOf, naturalGraphWidth, renderGraph } from "./graph.js";
import { renderInspector } from "./inspector.js";
import { historyAt, replayView } from "./replay.js";
import { runHeader, timelineLine } from "./run-header.js";
import { filterRuns, renderRunTable } from "./run-list.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { focusPath, type OpenRun, openRun, type ViewerState } from "./viewer-state.js";

interface ScreenSize {
  width: number;
  height: number;
}

export interface ScreenOptions extends ScreenSize {
  now: number;
  theme?: Theme;
  /** The symbols to draw with; default what this terminal can show. */
  glyphs?: Glyphs;
}

/** Below this the graph cannot be drawn; the viewer says so instead. */
const MIN_SCREEN: ScreenSize = { width: 40, height: 10 };

/** From this width on, the run screen shows the graph and the inspector side by side. */
const SPLIT_MIN_WIDTH = 100;
/** Neither side of the split layout gets fewer columns than this. */
export const SPLIT_MIN_PANE = 32;
const DIVIDER_COLUMNS = 3;

/** The keys, as `?` lists them and docs/viewer.md shows them. */
const KEY_MAP: ReadonlyArray<{ keys: string; where: string; does: string }> = [
  { keys: "↑ ↓  k j", where: "list", does: "choose a run" },
  { keys: "enter", where: "list", does: "open the run" },
  { keys: "tab", where: "list", does: "cycle the status filter" },
  { keys: "esc", where: "list", does: "quit the viewer" },
  { keys: "↑ ↓  k j", where: "run", does: "choose a node (stops following)" },
  { keys: "← →  h l", where: "run", does: "replay: step back / forward through the recorded events" },
  { keys: "home end", where: "run", does: "replay: first event / back to live" },
  { keys: "enter  i", where: "run", does: "inspect the chosen node (scroll it with ↑ ↓); again to leave" },
  { keys: "< >", where: "run", does: "wide terminal: narrow / widen the graph beside the inspector" },
  { keys: "f", where: "run", does: "follow the active node live again" },
  { keys: "pgup pgdn  wheel", where: "run", does: "scroll the graph or the inspector" },
  { keys: "esc  backspace", where: "run", does: "back to the run list" },
  { keys: "esc  backspace", where: "inspector", does: "close the inspector, back to the graph" },
  { keys: "?", where: "any", does: "show or hide this help" },
  { keys: "esc", where: "help", does: "close this help (so does any key)" },
  { keys: "q  ctrl+c", where: "any", does: "quit" },
];

const LIST_FOOTER = "↑↓ choose  enter open  tab filter  ? help  q quit";
const RUN_FOOTER = "↑↓ node  ←→ replay  enter inspect  f follow  esc back  ? help  q quit";
const SPLIT_FOOTER =
  "↑↓ node  ←→ replay  enter scroll inspector  < > resize  f follow  esc back  ? help  q quit";
const INSPECTOR_FOOTER = "↑↓ pgup pgdn scroll  ←→ replay  esc close  ? help  q quit";

const ASCII_KEYS: Record<string, string> = {
  "↑": "up",
  "↓": "dn",
  "←": "lt",
  "→": "rt",
  "↑↓": "up/dn",
  "←→": "lt/rt",
};

/** Key names as this terminal can show them: arrows become words in ASCII. */
function keyText(text: string, g: Glyphs): string {
  return g.ascii ? text.replace(/↑↓|←→|[↑↓←→]/g, (arrow) => ASCII_KEYS[arrow] ?? arrow) : text;
}

function fitLines(lines: string[], width: number, height: number, g: Glyphs): string[] {
  const out = lines.slice(0, height).map((line) => clipToWidth(line, width, g.ellipsis));
  while (out.length < height) out.push("");
  return out;
}

function connectionLine(state: ViewerState, theme: Theme, g: Glyphs): string | undefined {
  switch (state.connection.kind) {
    case "connected":
      return undefined;
    case "reconnecting":
      return theme("yellow", `host went away (${state.connection.message}); reconnecting${g.ellipsis}`);
    case "unavailable":
      return theme("red", `host unavailable: ${state.connection.message}`);
    default:
      return state.connection satisfies never;
  }
}

function helpLines(width: number, g: Glyphs): string[] {
  const lines = ["keys", ""];
  const keyWidth = Math.max(...KEY_MAP.map((entry) => keyText(entry.keys, g).length));
  const whereWidth = Math.max(...KEY_MAP.map((entry) => entry.where.length));
  for (const entry of KEY_MAP) {
    const keys = keyText(entry.keys, g).padEnd(keyWidth);
    lines.push(`  ${keys}  ${entry.where.padEnd(whereWidth)}  ${keyText(entry.does, g)}`);
  }
  lines.push("", "any key closes this help");
  return lines.map((line) => clipToWidth(line, width, g.ellipsis));
}

function listScreen(state: ViewerState, options: ScreenOptions, theme: Theme, g: Glyphs): string[] {
  const { width, height } = options;
  const runs = filterRuns(state.runs, state.filter);
  const dot = g.dot;
  const head = theme(
    "bold",
    `piw ${dot} runs ${dot} filter: ${state.filter} ${dot} ${runs.length} of ${state.runs.length}`,
  );
  const status =
    connectionLine(state, theme, g) ?? (state.notice === null ? "" : theme("yellow", state.notice));
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
    const all = renderRunTable(runs, {
      width,
      selected: state.listIndex,
      now: options.now,
      theme,
      glyphs: g,
    });
    // Keep the chosen row in view: the header stays, the rows scroll.
    const rows = body - 1;
    const top = Math.max(0, Math.min(state.listIndex - Math.floor(rows / 2), runs.length - rows));
    table = [all[0] ?? "", ...all.slice(1 + top, 1 + top + rows)];
  }
  const middle = state.help ? helpLines(width, g) : table;
  return [head, status, ...fitLines(middle, width, body, g), theme("dim", keyText(LIST_FOOTER, g))];
}

/**
 * Columns of the graph pane at `width`: what the graph needs (`natural`) up to 45% of the screen, so
 * the inspector gets the rest, moved by the user's `<` and `>`, kept within bounds.
 */
export function splitGraphWidth(width: number, shift: number, natural = Number.POSITIVE_INFINITY): number {
  // The base is within bounds first, so every `>` from it widens the graph.
  const base = Math.max(SPLIT_MIN_PANE, Math.min(Math.round(width * 0.45), natural + 1));
  const most = width - DIVIDER_COLUMNS - SPLIT_MIN_PANE;
  return Math.max(SPLIT_MIN_PANE, Math.min(most, base + shift));
}

function padTo(line: string, width: number, g: Glyphs): string {
  const fitted = clipToWidth(line, width, g.ellipsis);
  return fitted + " ".repeat(Math.max(0, width - visibleWidth(fitted)));
}

interface Pane {
  width: number;
  height: number;
  scroll: number;
}

function graphPane(shown: RunView, focus: string | null, at: number, pane: Pane, theme: Theme, g: Glyphs) {
  const layout = graphLayoutOf(shown);
  const card = layout.cards.find((c) => c.id === focus);
  // The focused card sits a third of the way down, moved by any scrolling, kept within the graph.
  const anchor = card === undefined ? 0 : card.top - Math.floor(pane.height / 3);
  const top = Math.max(0, Math.min(anchor + pane.scroll, layout.height - pane.height));
  const rows = { top, height: pane.height };
  const options = { width: pane.width, highlight: focus, now: at, theme, rows, glyphs: g };
  return renderGraph(shown, options, layout).lines;
}

function inspectorPane(
  run: OpenRun,
  shown: RunView,
  focus: string,
  at: number,
  pane: Pane,
  theme: Theme,
  g: Glyphs,
) {
  const history =
    run.replay !== null && run.history !== null ? historyAt(run.history, run.replay) : run.history;
  const lines = renderInspector(shown, history, focus, { width: pane.width, theme, now: at, glyphs: g });
  const top = Math.max(0, Math.min(pane.scroll, lines.length - pane.height));
  return lines.slice(top, top + pane.height);
}

function runScreen(
  state: ViewerState,
  run: OpenRun,
  options: ScreenOptions,
  theme: Theme,
  g: Glyphs,
): string[] {
  const { width, height } = options;
  const body = height - 3;
  const split = width >= SPLIT_MIN_WIDTH;
  const footerText = run.inspector ? INSPECTOR_FOOTER : split ? SPLIT_FOOTER : RUN_FOOTER;
  const footer = theme("dim", keyText(footerText, g));
  if (run.view === null) {
    const status = connectionLine(state, theme, g) ?? state.notice ?? `opening ${run.runId}${g.ellipsis}`;
    return [theme("bold", `piw ${g.dot} ${run.runId}`), status, ...fitLines([], width, body, g), footer];
  }
  const shown =
    run.replay !== null && run.history !== null ? replayView(run.view, run.history, run.replay) : run.view;
  const focus = focusPath(run, shown);
  const status = connectionLine(state, theme, g) ?? timelineLine(run, shown, focus, theme, g);
  // A replayed run is timed at its replay point, not at the wall clock.
  const at = run.replay === null ? options.now : (run.history?.events[run.replay]?.at ?? options.now);
  let middle: string[];
  if (state.help) {
    middle = helpLines(width, g);
  } else if (split) {
    // Wide: the graph on the left, the chosen node's inspector on the right, both always shown.
    const natural = naturalGraphWidth(shown, { now: at, glyphs: g });
    const left = splitGraphWidth(width, state.splitShift, natural);
    const right = width - left - DIVIDER_COLUMNS;
    const graph = graphPane(
      shown,
      focus,
      at,
      { width: left, height: body, scroll: run.inspector ? 0 : run.scroll },
      theme,
      g,
    );
    const inspector =
      focus === null
        ? []
        : inspectorPane(
            run,
            shown,
            focus,
            at,
            { width: right, height: body, scroll: run.inspector ? run.scroll : 0 },
            theme,
            g,
          );
    const divider = theme(run.inspector ? "bold" : "dim", g.divider);
    middle = [];
    for (let i = 0; i < body; i += 1) {
      middle.push(`${padTo(graph[i] ?? "", left, g)} ${divider} ${inspector[i] ?? ""}`);
    }
  } else if (run.inspector && focus !== null) {
    middle = inspectorPane(run, shown, focus, at, { width, height: body, scroll: run.scroll }, theme, g);
  } else {
    middle = graphPane(shown, focus, at, { width, height: body, scroll: run.scroll }, theme, g);
  }
  return [runHeader(shown, at, theme, g), status, ...fitLines(middle, width, body, g), footer];
}

/** The whole terminal: exactly `height` lines, none wider than `width`. */
export function renderScreen(state: ViewerState, options: ScreenOptions): string[] {
  const theme = options.theme ?? plainTheme;
  const g = options.glyphs ?? detectGlyphs();
  const width = Math.max(1, Math.floor(options.width));
  const height = Math.max(1, Math.floor(options.height));
  const sized = { ...options, width, height };
  let lines: string[];
  if (width < MIN_SCREEN.width || height < MIN_SCREEN.height) {
    const by = g.ascii ? "x" : "×";
    lines = wrapTextWithAnsi(
      `terminal too small for the piw viewer: need ${MIN_SCREEN.width}${by}${MIN_SCREEN.height}, have ${width}${by}${height}. Enlarge the window, or press q to quit.`,
      width,
    );
  } else if (state.screen === "run") {
    lines = runScreen(state, state.run, sized, theme, g);
  } else {
    lines = listScreen(state, sized, theme, g);
  }
  return fitLines(lines, width, height, g).map((line) => clipToWidth(line, width, ""));
}

/** `piw view <runId> --once`: the run's header, its live line and the whole graph, for scripts. */
export function renderSnapshot(
  view: RunView,
  options: { width: number; now: number; theme?: Theme; glyphs?: Glyphs },
): string[] {
  const theme = options.theme ?? plainTheme;
  const g = options.glyphs ?? detectGlyphs();
  const run = openRun(view.runId, view);
  const focus = focusPath(run, view);
  const graph = renderGraph(view, {
    width: options.width,
    highlight: focus,
    now: options.now,
    theme,
    glyphs: g,
  });
  return [
    runHeader(view, options.now, theme, g),
    timelineLine(run, view, focus, theme, g),
    "",
    ...graph.lines,
  ].map((line) => clipToWidth(line, Math.max(1, options.width), g.ellipsis));
}
