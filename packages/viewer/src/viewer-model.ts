import type { RunHistory, RunSummary, RunView, StepConversation } from "@piw/protocol";
import type { InspectorTab } from "./inspector-tabs.js";
import type { RunFilter } from "./run-list.js";

// The viewer's state, the keys and actions that change it and the requests it makes of the app.

/** What the viewer knows about its host link; it never guesses beyond what the client reports. */
export type ConnectionState =
  | { kind: "connected" }
  | { kind: "reconnecting"; message: string }
  | { kind: "unavailable"; message: string };

/** The open run: its live view, its recorded history, and where the user is looking. */
export interface OpenRun {
  runId: string;
  view: RunView | null;
  history: RunHistory | null;
  /** Index into `history.events`; null is live. */
  replay: number | null;
  /** The node the user picked; null follows the active node. */
  selected: string | null;
  inspector: boolean;
  /** Steps asked for while the history was still on its way; applied when it arrives. */
  pending: number | null;
  /** Lines scrolled by the wheel or page keys, in the graph or the inspector. */
  scroll: number;
  /** What the inspector shows of the chosen node. */
  tab: InspectorTab;
  /** The trace tab lists the chosen node's events, or the whole run's. */
  traceScope: "node" | "run";
  /** The replay moves on by itself, one event per beat at `ViewerState.speed`. */
  playing: boolean;
  /** The chosen step's conversation as the host last sent it; null before it came. */
  conversation: StepConversation | null;
}

/** How many events a second the replay plays. */
export type ReplaySpeed = 1 | 2 | 5 | 10;
export const REPLAY_SPEEDS: readonly ReplaySpeed[] = [1, 2, 5, 10];

interface ViewerBase {
  runs: RunSummary[];
  filter: RunFilter;
  /** Only this schedule's runs (`piw view --schedule`); null: every run. */
  schedule: string | null;
  listIndex: number;
  help: boolean;
  connection: ConnectionState;
  notice: string | null;
  /** Columns the `<` and `>` keys moved the split layout's divider by; negative narrows the graph. */
  splitShift: number;
  speed: ReplaySpeed;
}

/** The screen on show: the run list, or one open run (which only the run screen has). */
export type ViewerScreen = { screen: "list"; run: null } | { screen: "run"; run: OpenRun };

export type ViewerState = ViewerBase & ViewerScreen;

/** The one place the screen changes: to the list (closing the open run), or to a run. */
export function show(state: ViewerState, screen: ViewerScreen): ViewerState {
  return { ...state, ...screen };
}

export type ViewerKey =
  | "up"
  | "down"
  | "left"
  | "right"
  | "home"
  | "end"
  | "pageUp"
  | "pageDown"
  | "wheelUp"
  | "wheelDown"
  | "enter"
  | "inspect"
  | "back"
  | "follow"
  | "filter"
  | "help"
  | "narrower"
  | "wider"
  | "nextTab"
  | "steps"
  | "conversation"
  | "trace"
  | "info"
  | "scope"
  | "play"
  | "speed"
  | "quit";

export type ViewerAction =
  | { type: "key"; key: ViewerKey }
  | { type: "runs"; runs: RunSummary[] }
  | { type: "view"; view: RunView }
  | { type: "history"; history: RunHistory }
  | { type: "connection"; state: ConnectionState }
  | { type: "notice"; text: string | null }
  | { type: "conversation"; conversation: StepConversation }
  /** A beat of the playing replay: one event on. */
  | { type: "tick" }
  /** The mouse: a card clicked, a tab clicked, a pane scrolled, the divider dragged. */
  | { type: "choose"; path: string }
  | { type: "tab"; tab: InspectorTab }
  | { type: "scroll"; pane: "graph" | "inspector"; delta: number }
  | { type: "split"; shift: number };

/** What the app must do for the state to be right: the reducer itself never talks to the host. */
export type ViewerRequest =
  | { type: "open"; runId: string }
  | { type: "close"; runId: string }
  | { type: "history"; runId: string }
  | { type: "conversation"; runId: string; path: string }
  | { type: "quit" };

export interface ViewerStep {
  state: ViewerState;
  requests: ViewerRequest[];
}

export function initialState(runId?: string, schedule: string | null = null): ViewerState {
  return {
    ...(runId === undefined ? { screen: "list", run: null } : { screen: "run", run: openRun(runId) }),
    runs: [],
    filter: "all",
    schedule,
    listIndex: 0,
    help: false,
    connection: { kind: "connected" },
    notice: null,
    splitShift: 0,
    speed: 1,
  };
}

/** A run opened on the run screen, with nothing selected yet; `view` when it is already known. */
export function openRun(runId: string, view: RunView | null = null): OpenRun {
  return {
    runId,
    view,
    history: null,
    replay: null,
    selected: null,
    inspector: false,
    pending: null,
    scroll: 0,
    tab: "steps",
    traceScope: "node",
    playing: false,
    conversation: null,
  };
}
