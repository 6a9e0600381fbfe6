import type { RunSummary, RunView } from "@piw/protocol";
import { activePath, flowOrder } from "./flow.js";
import { cycleTab } from "./inspector-tabs.js";
import { replayView, stepReplay } from "./replay.js";
import { filterRuns, RUN_FILTERS, type RunFilter } from "./run-list.js";
import {
  type OpenRun,
  openRun,
  REPLAY_SPEEDS,
  show,
  type ViewerAction,
  type ViewerKey,
  type ViewerRequest,
  type ViewerState,
  type ViewerStep,
} from "./viewer-model.js";

export type {
  ConnectionState,
  OpenRun,
  ViewerAction,
  ViewerKey,
  ViewerRequest,
  ViewerState,
  ViewerStep,
} from "./viewer-model.js";
export { initialState, openRun } from "./viewer-model.js";

/** The view on screen: the live one, or the run re-derived at the replay position. */
function shownNodes(run: OpenRun): string[] {
  return run.view === null ? [] : flowOrder(run.view.manifest, run.view.nodes);
}

/** The node the graph highlights and the inspector shows. */
export function focusPath(run: OpenRun, shown: RunView | null): string | null {
  if (run.selected !== null) return run.selected;
  if (shown === null) return null;
  // A run that ended on a failing node shows that node first: it is what the user came to see.
  if (shown.status === "failed" || shown.outcome === "timed_out") {
    const failing = shown.nodes
      .filter((node) => node.state === "failed" || node.state === "timed_out")
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0))[0];
    if (failing !== undefined) return failing.path;
  }
  return activePath(shown) ?? shown.manifest.startPath;
}

const PAGE = 10;
/** Columns one `<` or `>` moves the split layout's divider. */
const SPLIT_STEP = 4;
const WHEEL = 3;

function visibleRuns(state: ViewerState): RunSummary[] {
  return filterRuns(state.runs, state.filter, state.schedule);
}

function onListKey(state: ViewerState, key: ViewerKey): ViewerStep {
  const runs = visibleRuns(state);
  const clamp = (i: number) => Math.max(0, Math.min(i, runs.length - 1));
  switch (key) {
    case "up":
    case "wheelUp":
      return { state: { ...state, listIndex: clamp(state.listIndex - 1) }, requests: [] };
    case "down":
    case "wheelDown":
      return { state: { ...state, listIndex: clamp(state.listIndex + 1) }, requests: [] };
    case "pageUp":
    case "home":
      return {
        state: { ...state, listIndex: clamp(key === "home" ? 0 : state.listIndex - PAGE) },
        requests: [],
      };
    case "pageDown":
    case "end":
      return {
        state: { ...state, listIndex: clamp(key === "end" ? runs.length - 1 : state.listIndex + PAGE) },
        requests: [],
      };
    case "filter": {
      const filter = RUN_FILTERS[(RUN_FILTERS.indexOf(state.filter) + 1) % RUN_FILTERS.length] as RunFilter;
      return { state: { ...state, filter, listIndex: 0 }, requests: [] };
    }
    case "enter":
    case "right":
    case "inspect": {
      const run = runs[state.listIndex];
      if (run === undefined) return { state, requests: [] };
      return {
        state: { ...show(state, { screen: "run", run: openRun(run.runId) }), notice: null },
        requests: [{ type: "open", runId: run.runId }],
      };
    }
    case "quit":
    case "back":
      return { state, requests: [{ type: "quit" }] };
    case "left":
    case "follow":
    case "help":
    case "narrower":
    case "wider":
    case "nextTab":
    case "steps":
    case "conversation":
    case "trace":
    case "info":
    case "scope":
    case "play":
    case "speed":
      return { state, requests: [] };
    default:
      return key satisfies never;
  }
}

function onRunKey(state: ViewerState, run: OpenRun, key: ViewerKey): ViewerStep {
  const set = (patch: Partial<OpenRun>, requests: ViewerRequest[] = []): ViewerStep => ({
    state: show(state, { screen: "run", run: { ...run, ...patch } }),
    requests,
  });
  const events = run.history?.events.length ?? 0;
  // The replay needs the history as of now; a stale one is fetched again first.
  const stale = run.history === null || (run.view !== null && run.history.revision < run.view.revision);
  const scrub = (delta: number): ViewerStep => {
    if (stale) return set({ pending: (run.pending ?? 0) + delta }, [{ type: "history", runId: run.runId }]);
    return set({ replay: stepReplay(run.replay, delta, events) });
  };
  const moveSelection = (delta: number): ViewerStep => {
    const order = shownNodes(run);
    if (order.length === 0) return set({});
    const current = run.selected ?? (run.view === null ? null : activePath(run.view));
    const at = current === null ? -1 : order.indexOf(current);
    const next = order[Math.max(0, Math.min(order.length - 1, at < 0 ? 0 : at + delta))] ?? null;
    return set({ selected: next, scroll: 0 });
  };
  switch (key) {
    case "up":
      return run.inspector ? set({ scroll: Math.max(0, run.scroll - 1) }) : moveSelection(-1);
    case "down":
      return run.inspector ? set({ scroll: run.scroll + 1 }) : moveSelection(1);
    case "left":
      return scrub(-1);
    case "right":
      return scrub(1);
    case "home":
      return scrub(-events - 1_000_000);
    case "end":
      return set({ replay: null, playing: false });
    case "pageUp":
      return set({ scroll: run.scroll - PAGE });
    case "pageDown":
      return set({ scroll: run.scroll + PAGE });
    case "wheelUp":
      return set({ scroll: run.scroll - WHEEL });
    case "wheelDown":
      return set({ scroll: run.scroll + WHEEL });
    case "enter":
    case "inspect": {
      const opening = !run.inspector;
      return set(
        { inspector: opening, scroll: 0 },
        opening && (run.history === null || stale) ? [{ type: "history", runId: run.runId }] : [],
      );
    }
    case "follow":
      return set({ selected: null, replay: null, scroll: 0, playing: false });
    case "back":
      if (run.inspector) return set({ inspector: false, scroll: 0 });
      return {
        state: show(state, { screen: "list", run: null }),
        requests: [{ type: "close", runId: run.runId }],
      };
    case "narrower":
    case "wider":
      // The screen keeps the divider within bounds; past them the keys change nothing.
      return {
        state: { ...state, splitShift: state.splitShift + (key === "wider" ? SPLIT_STEP : -SPLIT_STEP) },
        requests: [],
      };
    case "filter":
    case "nextTab":
      return set({ tab: cycleTab(run.tab, 1), scroll: 0 });
    case "steps":
    case "conversation":
    case "trace":
    case "info":
      return set({ tab: key, scroll: 0 });
    case "scope":
      return set({ traceScope: run.traceScope === "node" ? "run" : "node" });
    case "play": {
      if (run.playing) return set({ playing: false });
      // Playing from live starts at the first event: live has nothing left to play.
      if (stale) return set({ playing: true }, [{ type: "history", runId: run.runId }]);
      return set({ playing: events > 1, replay: run.replay ?? (events > 1 ? 0 : null) });
    }
    case "speed": {
      const speed = REPLAY_SPEEDS[(REPLAY_SPEEDS.indexOf(state.speed) + 1) % REPLAY_SPEEDS.length] ?? 1;
      return { state: { ...state, speed }, requests: [] };
    }
    case "help":
      return set({});
    case "quit":
      return { state, requests: [{ type: "quit" }] };
    default:
      return key satisfies never;
  }
}

/** The view at the replay cursor, or the live one. */
export function shownView(run: OpenRun): RunView | null {
  if (run.view === null) return null;
  return run.replay !== null && run.history !== null
    ? replayView(run.view, run.history, run.replay)
    : run.view;
}

/** Asks for the chosen step's conversation when the conversation tab shows it and it is not loaded. */
function withConversation(step: ViewerStep, always = false): ViewerStep {
  const run = step.state.run;
  if (step.state.screen !== "run" || run === null || run.tab !== "conversation") return step;
  const path = focusPath(run, shownView(run));
  if (path === null || (!always && run.conversation?.path === path)) return step;
  if (step.requests.some((r) => r.type === "conversation")) return step;
  return { ...step, requests: [...step.requests, { type: "conversation", runId: run.runId, path }] };
}

function onRunAction(
  state: ViewerState,
  action: ViewerAction & { type: "tick" | "choose" | "tab" | "scroll" | "split" },
): ViewerStep {
  const run = state.run;
  if (state.screen !== "run" || run === null) return { state, requests: [] };
  const set = (patch: Partial<OpenRun>): ViewerStep => ({
    state: { ...state, run: { ...run, ...patch } },
    requests: [],
  });
  switch (action.type) {
    case "tick": {
      if (!run.playing || run.history === null) return set({ playing: false });
      const replay = stepReplay(run.replay, 1, run.history.events.length);
      return set({ replay, playing: replay !== null });
    }
    case "choose":
      return set({ selected: action.path, scroll: 0 });
    case "tab":
      return set({ tab: action.tab, scroll: 0, inspector: true });
    case "scroll": {
      // The wheel scrolls the pane under the pointer, and that pane takes the keys.
      const inspector = action.pane === "inspector";
      const from = run.inspector === inspector ? run.scroll : 0;
      return set({ inspector, scroll: inspector ? Math.max(0, from + action.delta) : from + action.delta });
    }
    case "split":
      return { state: { ...state, splitShift: action.shift }, requests: [] };
    default:
      return action satisfies never;
  }
}

/** The viewer's one state transition: keys, host updates and connection changes all come here. */
export function reduceViewer(state: ViewerState, action: ViewerAction): ViewerStep {
  switch (action.type) {
    case "key": {
      if (action.key === "help") return { state: { ...state, help: !state.help }, requests: [] };
      if (state.help) return { state: { ...state, help: false }, requests: [] };
      if (state.screen === "run") return withConversation(onRunKey(state, state.run, action.key));
      return onListKey(state, action.key);
    }
    case "tick":
    case "choose":
    case "tab":
    case "scroll":
    case "split":
      return withConversation(onRunAction(state, action));
    case "conversation": {
      const run = state.run;
      if (run === null || run.runId !== action.conversation.runId) return { state, requests: [] };
      return {
        state: show(state, { screen: "run", run: { ...run, conversation: action.conversation } }),
        requests: [],
      };
    }
    case "runs": {
      const runs = [...action.runs].sort((a, b) => b.createdAt - a.createdAt);
      const max = Math.max(0, filterRuns(runs, state.filter, state.schedule).length - 1);
      return { state: { ...state, runs, listIndex: Math.min(state.listIndex, max) }, requests: [] };
    }
    case "view": {
      const { view } = action;
      // A read answered after a newer push must not take the screen back in time.
      if (state.run?.runId === view.runId && (state.run.view?.revision ?? -1) > view.revision) {
        return { state, requests: [] };
      }
      const known = state.runs.some((run) => run.runId === view.runId);
      const runs = known
        ? state.runs.map((run) => (run.runId === view.runId ? { ...run, ...summaryOf(view) } : run))
        : [summaryOf(view), ...state.runs];
      const open = state.run !== null && state.run.runId === view.runId ? state.run : null;
      // An open inspector follows the run live: its data is read again once the run moved on.
      const refresh = open?.inspector && open.history !== null && open.history.revision < view.revision;
      const shown = open === null ? state : show(state, { screen: "run", run: { ...open, view } });
      const step: ViewerStep = {
        state: { ...shown, runs },
        requests: refresh ? [{ type: "history", runId: view.runId }] : [],
      };
      // A running step's conversation grows between pushes: read it again with each one.
      return open === null ? step : withConversation(step, true);
    }
    case "history": {
      const { history } = action;
      if (state.run === null || state.run.runId !== history.runId) return { state, requests: [] };
      const run = state.run;
      let replay =
        run.pending === null ? run.replay : stepReplay(run.replay, run.pending, history.events.length);
      // Play was pressed before the history came: it starts now, from the first event.
      if (run.playing && replay === null) replay = history.events.length > 1 ? 0 : null;
      const playing = run.playing && replay !== null;
      return withConversation({
        state: show(state, { screen: "run", run: { ...run, history, replay, pending: null, playing } }),
        requests: [],
      });
    }
    case "connection":
      return { state: { ...state, connection: action.state }, requests: [] };
    case "notice":
      return { state: { ...state, notice: action.text }, requests: [] };
    default:
      return action satisfies never;
  }
}

function summaryOf(view: RunView): RunSummary {
  const { nodes: _nodes, manifest: _manifest, ...summary } = view;
  return summary;
}
