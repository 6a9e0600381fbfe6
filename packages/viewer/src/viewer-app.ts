import {
  type Component,
  ProcessTerminal,
  parseKey,
  type Terminal,
  TuiAltScreen,
  type TuiMouseEvent,
  type TuiMouseEventResult,
} from "@earendil-works/pi-tui";
import type { RunHistory, RunSummary, RunView, StepConversation } from "@piw/protocol";
import { hasRunningWork } from "./run-header.js";
import { renderScreen, type ScreenOptions, screenTarget, splitShiftAt } from "./screen.js";
import { ansiTheme, type Theme } from "./theme.js";
import {
  type ConnectionState,
  initialState,
  reduceViewer,
  type ViewerAction,
  type ViewerKey,
  type ViewerRequest,
  type ViewerState,
} from "./viewer-state.js";

/**
 * Everything the viewer asks of the host. The app in apps/piw implements it with the host client;
 * the viewer never opens the database and never looks at processes or clocks to guess progress.
 */
export interface ViewerSource {
  listRuns(): Promise<RunSummary[]>;
  getRun(runId: string): Promise<RunView | null>;
  history(runId: string): Promise<RunHistory | null>;
  /** What the agent said and did in one step (`runs.conversation`). */
  conversation(runId: string, path: string): Promise<StepConversation | null>;
  /** Pushed views of every run as they change; resolves with the way to stop. */
  watchRuns(onView: (view: RunView) => void): Promise<() => Promise<void>>;
  /** Connection changes: a host that went away, came back, or cannot be reached. */
  onConnection(listener: (state: ConnectionState) => void): () => void;
}

export interface ViewerAppOptions {
  source: ViewerSource;
  /** Open this run at once instead of the run list. */
  runId?: string;
  /** List only this schedule's runs. */
  schedule?: string;
  terminal?: Terminal;
  theme?: Theme;
  now?: () => number;
}

const KEYS: Record<string, ViewerKey> = {
  up: "up",
  k: "up",
  down: "down",
  j: "down",
  left: "left",
  h: "left",
  right: "right",
  l: "right",
  home: "home",
  end: "end",
  pageUp: "pageUp",
  pageDown: "pageDown",
  enter: "enter",
  i: "inspect",
  escape: "back",
  backspace: "back",
  f: "follow",
  tab: "filter",
  s: "filter",
  "?": "help",
  "<": "narrower",
  ">": "wider",
  ",": "narrower",
  ".": "wider",
  "1": "steps",
  "2": "conversation",
  "3": "trace",
  "4": "info",
  a: "scope",
  space: "play",
  " ": "play",
  p: "play",
  x: "speed",
  q: "quit",
  "ctrl+c": "quit",
};

// Home and End as tmux, screen and the Linux console send them (VT220 style), which pi-tui leaves alone.
const VT_KEYS: Record<string, ViewerKey> = {
  "\u001b[1~": "home",
  "\u001b[7~": "home",
  "\u001b[4~": "end",
  "\u001b[8~": "end",
};

/** Turns raw terminal input into a viewer key, or undefined for input the viewer ignores. */
export function viewerKeyOf(data: string): ViewerKey | undefined {
  const vt = VT_KEYS[data];
  if (vt !== undefined) return vt;
  const id = parseKey(data) ?? data;
  return KEYS[id];
}

const TICK_MS = 1_000;
/** Lines one wheel notch scrolls a pane. */
const WHEEL_LINES = 3;

/**
 * Whether the screen shows a clock that moves on its own: a running node's elapsed time, live (a
 * replayed run stands still), or a running run's duration in the list.
 */
export function needsTick(state: ViewerState): boolean {
  if (state.screen === "run") {
    const run = state.run;
    return run.replay === null && run.view !== null && hasRunningWork(run.view);
  }
  return state.runs.some((run) => run.status === "running" || run.status === "starting");
}

/** The one component on screen: it draws `renderScreen` at the terminal's size. */
class ViewerScreen implements Component {
  /** The divider is being dragged: moves go to it until the button is let go. */
  private dragging = false;

  constructor(
    private readonly terminal: Terminal,
    private readonly state: () => ViewerState,
    private readonly dispatch: (action: ViewerAction) => void,
    private readonly theme: Theme,
    private readonly now: () => number,
  ) {}

  private options(width: number): ScreenOptions {
    return { width, height: this.terminal.rows, now: this.now(), theme: this.theme };
  }

  render(width: number): string[] {
    return renderScreen(this.state(), this.options(width));
  }

  handleInput(data: string): void {
    const key = viewerKeyOf(data);
    if (key !== undefined) this.dispatch({ type: "key", key });
  }

  handleMouse(event: TuiMouseEvent): TuiMouseEventResult | undefined {
    const state = this.state();
    const options = this.options(event.width);
    if (this.dragging) {
      if (event.type === "release") this.dragging = false;
      else if (event.type === "drag" || event.type === "move")
        this.dispatch({ type: "split", shift: splitShiftAt(state, options, event.x) });
      return { handled: true, render: true };
    }
    const target = screenTarget(state, options, event.x, event.y);
    if (event.type === "wheel") {
      const delta = (event.wheelDelta ?? 0) < 0 ? -WHEEL_LINES : WHEEL_LINES;
      if (target.kind === "graph" || target.kind === "card")
        this.dispatch({ type: "scroll", pane: "graph", delta });
      else if (target.kind === "inspector" || target.kind === "tab")
        this.dispatch({ type: "scroll", pane: "inspector", delta });
      else this.dispatch({ type: "key", key: delta < 0 ? "wheelUp" : "wheelDown" });
      return { handled: true, render: true };
    }
    if (event.type !== "press" || event.button !== "left") return undefined;
    switch (target.kind) {
      case "card":
        this.dispatch({ type: "choose", path: target.path });
        break;
      case "tab":
        this.dispatch({ type: "tab", tab: target.tab });
        break;
      case "divider":
        this.dragging = true;
        return { capture: true, render: true };
      case "graph":
      case "inspector":
      case "none":
        return undefined;
      default:
        return target satisfies never;
    }
    return { handled: true, render: true };
  }

  invalidate(): void {}
}

/**
 * Runs the interactive viewer until the user quits. Every change comes from the host: pushed views,
 * history replies and connection events go through `reduceViewer`, and each one redraws.
 */
export async function runViewerApp(options: ViewerAppOptions): Promise<void> {
  const { source } = options;
  const terminal = options.terminal ?? new ProcessTerminal();
  const theme = options.theme ?? ansiTheme;
  const now = options.now ?? Date.now;
  let state = initialState(options.runId, options.schedule ?? null);
  const tui = new TuiAltScreen(terminal, false, undefined, { mouse: true, copyOnSelect: false });
  const fetching = new Set<string>();
  // Asked for again while a read was under way: read once more when it ends, not once per push.
  const again = new Set<string>();
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  // Elapsed times move between pushes: a one-second redraw, kept only while something is running.
  let ticker: ReturnType<typeof setInterval> | undefined;
  const updateTicker = () => {
    const ticking = needsTick(state);
    if (ticking && ticker === undefined) {
      ticker = setInterval(() => tui.requestRender(), TICK_MS);
      ticker.unref?.();
    } else if (!ticking && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
  // The playing replay's beat: one event per beat, `speed` beats a second.
  let player: { timer: ReturnType<typeof setInterval>; speed: number } | undefined;
  const updatePlayer = () => {
    const playing = state.screen === "run" && state.run?.playing === true;
    if (player !== undefined && (!playing || player.speed !== state.speed)) {
      clearInterval(player.timer);
      player = undefined;
    }
    if (playing && player === undefined) {
      const timer = setInterval(() => dispatch({ type: "tick" }), TICK_MS / state.speed);
      timer.unref?.();
      player = { timer, speed: state.speed };
    }
  };
  const dispatch = (action: ViewerAction) => {
    const step = reduceViewer(state, action);
    state = step.state;
    for (const request of step.requests) perform(request);
    updateTicker();
    updatePlayer();
    tui.requestRender();
  };
  const report = (error: unknown) => {
    const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
    dispatch({ type: "notice", text: message });
  };
  const loadHistory = (runId: string) => {
    if (fetching.has(runId)) {
      again.add(runId);
      return;
    }
    fetching.add(runId);
    source
      .history(runId)
      .then((history) => {
        if (history !== null) dispatch({ type: "history", history });
      })
      .catch(report)
      .finally(() => {
        fetching.delete(runId);
        if (again.delete(runId)) loadHistory(runId);
      });
  };
  // One conversation read at a time; a newer ask waits for it and replaces any older waiting one.
  let reading = false;
  let nextRead: { runId: string; path: string } | undefined;
  const loadConversation = (runId: string, path: string) => {
    if (reading) {
      nextRead = { runId, path };
      return;
    }
    reading = true;
    source
      .conversation(runId, path)
      .then((conversation) => {
        if (conversation !== null) dispatch({ type: "conversation", conversation });
      })
      .catch(report)
      .finally(() => {
        reading = false;
        const next = nextRead;
        nextRead = undefined;
        if (next !== undefined) loadConversation(next.runId, next.path);
      });
  };
  const loadRun = (runId: string) => {
    source
      .getRun(runId)
      .then((view) => {
        if (view === null) dispatch({ type: "notice", text: `no run ${runId}` });
        else dispatch({ type: "view", view });
      })
      .catch(report);
    loadHistory(runId);
  };
  const loadRuns = () => {
    source
      .listRuns()
      .then((runs) => dispatch({ type: "runs", runs }))
      .catch(report);
  };
  function perform(request: ViewerRequest): void {
    switch (request.type) {
      case "open":
        loadRun(request.runId);
        return;
      case "close":
        return;
      case "history":
        loadHistory(request.runId);
        return;
      case "conversation":
        loadConversation(request.runId, request.path);
        return;
      case "quit":
        finish();
        return;
      default:
        request satisfies never;
    }
  }

  const screen = new ViewerScreen(terminal, () => state, dispatch, theme, now);
  tui.addChild(screen);
  tui.setFocus(screen);
  const stopConnection = source.onConnection((connection) => {
    dispatch({ type: "connection", state: connection });
    // Back from a host restart: what changed meanwhile was not pushed, so read it again.
    if (connection.kind === "connected") {
      loadRuns();
      if (state.run !== null) loadRun(state.run.runId);
    }
  });
  tui.start();
  let stopWatching: (() => Promise<void>) | undefined;
  try {
    stopWatching = await source.watchRuns((view) => dispatch({ type: "view", view }));
    loadRuns();
    if (options.runId !== undefined) loadRun(options.runId);
    await done;
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
    if (player !== undefined) clearInterval(player.timer);
    stopConnection();
    tui.stop();
    await stopWatching?.().catch(() => undefined);
  }
}
