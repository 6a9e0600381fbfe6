import { visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { RunView } from "@piw/protocol";
import { detectGlyphs, type Glyphs } from "./glyphs.js";
import { graphLayoutOf, naturalGraphWidth, renderGraph } from "./graph.js";
import { renderConversation } from "./conversation-tab.js";
import { renderInfo } from "./info-tab.js";
import { renderInspector } from "./inspector.js";
import { type InspectorTab, tabAt, tabBar } from "./inspector-tabs.js";
import { footerOf, helpLines, keyText, LIST_FOOTER } from "./key-help.js";
import { historyAt } from "./replay.js";
import { runHeader, timelineLine } from "./run-header.js";
import { filterRuns, renderRunTable } from "./run-list.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { type TabLines, renderTrace } from "./trace-tab.js";
import { focusPath, type OpenRun, openRun, shownView, type ViewerState } from "./viewer-state.js";

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

function listScreen(state: ViewerState, options: ScreenOptions, theme: Theme, g: Glyphs): string[] {
  const { width, height } = options;
  const runs = filterRuns(state.runs, state.filter, state.schedule);
  const dot = g.dot;
  const head = theme(
    "bold",
    `piw ${dot} runs ${dot} filter: ${state.filter}${state.schedule === null ? "" : ` ${dot} schedule ${state.schedule}`} ${dot} ${runs.length} of ${state.runs.length}`,
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

/** The graph's rows in a pane: the focused card a third of the way down, moved by any scrolling. */
function graphPane(shown: RunView, focus: string | null, at: number, pane: Pane, theme: Theme, g: Glyphs) {
  const layout = graphLayoutOf(shown);
  const card = layout.cards.find((c) => c.id === focus);
  const anchor = card === undefined ? 0 : card.top - Math.floor(pane.height / 3);
  const top = Math.max(0, Math.min(anchor + pane.scroll, layout.height - pane.height));
  const rows = { top, height: pane.height };
  const options = { width: pane.width, highlight: focus, now: at, theme, rows, glyphs: g };
  const graph = renderGraph(shown, options, layout);
  return { lines: graph.lines, top, cards: graph.cards };
}

/** The chosen tab's lines, and the line kept in view before scrolling. */
function tabLines(
  run: OpenRun,
  shown: RunView,
  focus: string,
  at: number,
  width: number,
  theme: Theme,
  g: Glyphs,
): TabLines {
  const history =
    run.replay !== null && run.history !== null ? historyAt(run.history, run.replay) : run.history;
  switch (run.tab) {
    case "steps":
      return {
        lines: renderInspector(shown, history, focus, { width, theme, now: at, glyphs: g }),
        anchor: 0,
      };
    case "conversation":
      return renderConversation(run.conversation, {
        width,
        theme,
        glyphs: g,
        path: focus,
        agent: shown.nodes.find((node) => node.path === focus)?.kind === "agent",
        history,
        replaying: run.replay !== null,
      });
    case "trace":
      return renderTrace(run.history, {
        width,
        theme,
        glyphs: g,
        focus,
        scope: run.traceScope,
        position: run.replay,
      });
    case "info":
      return renderInfo(shown, { width, theme, glyphs: g });
    default:
      return run.tab satisfies never;
  }
}

/** The inspector: its tab bar, then the chosen tab scrolled to keep its anchor in view. */
function inspectorPane(
  run: OpenRun,
  shown: RunView,
  focus: string,
  at: number,
  pane: Pane,
  theme: Theme,
  g: Glyphs,
) {
  const { lines, anchor } = tabLines(run, shown, focus, at, pane.width, theme, g);
  const height = pane.height - 1;
  const base = anchor === 0 ? 0 : anchor - Math.floor((height * 2) / 3);
  const top = Math.max(0, Math.min(base + pane.scroll, lines.length - height));
  return [tabBar(run.tab, theme, g.divider), ...lines.slice(top, top + height)];
}

/** Where the run screen puts its panes: drawing and the mouse both go by these numbers. */
interface RunLayout {
  split: boolean;
  /** Rows between the two header lines and the footer. */
  body: number;
  graph: { shown: boolean; width: number };
  inspector: { shown: boolean; x: number; width: number };
}

/** The run screen's first body row: below the header and the timeline line. */
const BODY_TOP = 2;

function runLayout(
  state: ViewerState,
  run: OpenRun,
  shown: RunView,
  size: ScreenSize,
  at: number,
  g: Glyphs,
): RunLayout {
  const { width, height } = size;
  const body = height - 3;
  if (width >= SPLIT_MIN_WIDTH) {
    const natural = naturalGraphWidth(shown, { now: at, glyphs: g });
    const left = splitGraphWidth(width, state.splitShift, natural);
    return {
      split: true,
      body,
      graph: { shown: true, width: left },
      inspector: { shown: true, x: left + DIVIDER_COLUMNS, width: width - left - DIVIDER_COLUMNS },
    };
  }
  const inspecting = run.inspector;
  return {
    split: false,
    body,
    graph: { shown: !inspecting, width },
    inspector: { shown: inspecting, x: 0, width },
  };
}

/** The shown view and the moment it stands at: the replay point's time, or the wall clock. */
function moment(run: OpenRun, now: number): { shown: RunView | null; at: number } {
  const shown = shownView(run);
  const at = run.replay === null ? now : (run.history?.events[run.replay]?.at ?? now);
  return { shown, at };
}

function runScreen(
  state: ViewerState,
  run: OpenRun,
  options: ScreenOptions,
  theme: Theme,
  g: Glyphs,
): string[] {
  const { width } = options;
  const { shown, at } = moment(run, options.now);
  if (shown === null) {
    const body = options.height - 3;
    const status = connectionLine(state, theme, g) ?? state.notice ?? `opening ${run.runId}${g.ellipsis}`;
    const footer = footerOf(run, width >= SPLIT_MIN_WIDTH, g, theme);
    return [theme("bold", `piw ${g.dot} ${run.runId}`), status, ...fitLines([], width, body, g), footer];
  }
  const layout = runLayout(state, run, shown, options, at, g);
  const { body } = layout;
  const focus = focusPath(run, shown);
  const status = connectionLine(state, theme, g) ?? timelineLine(run, shown, focus, theme, g, state.speed);
  let middle: string[];
  if (state.help) {
    middle = helpLines(width, g);
  } else if (layout.split) {
    // Wide: the graph on the left, the chosen node's inspector on the right, both always shown.
    const left = layout.graph.width;
    const graph = graphPane(
      shown,
      focus,
      at,
      { width: left, height: body, scroll: run.inspector ? 0 : run.scroll },
      theme,
      g,
    ).lines;
    const inspector =
      focus === null
        ? []
        : inspectorPane(
            run,
            shown,
            focus,
            at,
            { width: layout.inspector.width, height: body, scroll: run.inspector ? run.scroll : 0 },
            theme,
            g,
          );
    const divider = theme(run.inspector ? "bold" : "dim", g.divider);
    middle = [];
    for (let i = 0; i < body; i += 1) {
      middle.push(`${padTo(graph[i] ?? "", left, g)} ${divider} ${inspector[i] ?? ""}`);
    }
  } else if (layout.inspector.shown && focus !== null) {
    middle = inspectorPane(run, shown, focus, at, { width, height: body, scroll: run.scroll }, theme, g);
  } else {
    middle = graphPane(shown, focus, at, { width, height: body, scroll: run.scroll }, theme, g).lines;
  }
  return [
    runHeader(shown, at, theme, g),
    status,
    ...fitLines(middle, width, body, g),
    footerOf(run, layout.split, g, theme),
  ];
}

/** What the mouse points at on the screen. */
export type ScreenTarget =
  | { kind: "card"; path: string }
  | { kind: "tab"; tab: InspectorTab }
  | { kind: "graph" }
  | { kind: "inspector" }
  | { kind: "divider" }
  | { kind: "none" };

/** The thing at column `x`, row `y` (zero-based) of the screen `renderScreen` draws with `options`. */
export function screenTarget(state: ViewerState, options: ScreenOptions, x: number, y: number): ScreenTarget {
  const run = state.run;
  if (state.screen !== "run" || run === null || state.help) return { kind: "none" };
  const g = options.glyphs ?? detectGlyphs();
  const { shown, at } = moment(run, options.now);
  if (shown === null) return { kind: "none" };
  const layout = runLayout(state, run, shown, options, at, g);
  const row = y - BODY_TOP;
  if (row < 0 || row >= layout.body) return { kind: "none" };
  if (layout.split && (x === layout.graph.width || x === layout.graph.width + 1)) return { kind: "divider" };
  if (layout.inspector.shown && x >= layout.inspector.x) {
    const tab = row === 0 ? tabAt(x - layout.inspector.x) : undefined;
    return tab === undefined ? { kind: "inspector" } : { kind: "tab", tab };
  }
  if (!layout.graph.shown || x >= layout.graph.width) return { kind: "none" };
  const focus = focusPath(run, shown);
  const pane = {
    width: layout.graph.width,
    height: layout.body,
    scroll: layout.split && run.inspector ? 0 : run.scroll,
  };
  const graph = graphPane(shown, focus, at, pane, plainTheme, g);
  const line = graph.top + row;
  const card = graph.cards.find(
    (c) => line >= c.top && line < c.top + c.height && x >= c.left && x < c.left + c.width,
  );
  return card === undefined ? { kind: "graph" } : { kind: "card", path: card.id };
}

/** The divider shift that puts the split layout's divider at column `x`, as a drag asks. */
export function splitShiftAt(state: ViewerState, options: ScreenOptions, x: number): number {
  const run = state.run;
  if (run === null) return state.splitShift;
  const g = options.glyphs ?? detectGlyphs();
  const { shown, at } = moment(run, options.now);
  if (shown === null) return state.splitShift;
  const natural = naturalGraphWidth(shown, { now: at, glyphs: g });
  const width = Math.floor(options.width);
  const wanted = Math.max(SPLIT_MIN_PANE, Math.min(width - DIVIDER_COLUMNS - SPLIT_MIN_PANE, x - 1));
  return wanted - splitGraphWidth(width, 0, natural);
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
