import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { GraphManifest, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { RunWidget } from "../src/run-widget.js";
import { nextPhase, type OpenTurn, type SessionPhase } from "../src/session-phase.js";

const LONG = "a-node-with-a-rather-long-name-that-needs-room";

function view(overrides: Partial<RunView> = {}): RunView {
  const manifest: GraphManifest = {
    version: 1,
    workflow: "wide",
    startPath: LONG,
    exits: ["done"],
    maxSteps: 10,
    nodes: [{ path: LONG, name: LONG, scope: "", kind: "compute", title: LONG }],
    mounts: [],
    edges: [{ from: LONG, to: { kind: "exit", exit: "done" } }],
  };
  return {
    runId: "wide-1",
    workflowName: "wide",
    source: { kind: "file", path: "/w/wide.workflow.ts", sha256: "0".repeat(64) },
    title: null,
    status: "running",
    outcome: null,
    origin: { kind: "pi", sessionId: "s-1" },
    parentRunId: null,
    rootRunId: "wide-1",
    originCommand: "start",
    restartNumber: 0,
    paused: false,
    recoveryReason: null,
    error: null,
    revision: 1,
    createdAt: 1_000,
    startedAt: 1_000,
    finishedAt: null,
    currentWork: { kind: "none" },
    cursor: null,
    nodes: [
      {
        path: LONG,
        kind: "compute",
        title: LONG,
        state: "running",
        visits: 1,
        attempt: 1,
        startedAt: 1_000,
        finishedAt: null,
        errorCode: null,
      },
    ],
    manifest,
    ...overrides,
  };
}

type WidgetContent =
  | string[]
  | ((tui: { requestRender(): void }) => { render(width: number): string[] })
  | undefined;

/** A Pi UI that records what the widget was given. */
function uiStub(mode: ExtensionContext["mode"]) {
  const widgets: WidgetContent[] = [];
  const statuses: Array<string | undefined> = [];
  const ctx = {
    mode,
    ui: {
      setWidget: (_key: string, content: WidgetContent) => widgets.push(content),
      setStatus: (_key: string, status: string | undefined) => statuses.push(status),
    },
  } as unknown as Pick<ExtensionContext, "ui" | "mode">;
  return { ctx, widgets, statuses };
}

const widest = (lines: readonly string[]) => Math.max(...lines.map((line) => line.length));

describe("the run widget", () => {
  it("in Pi's terminal UI, renders at the width Pi passes to render(width) and redraws on a new view", () => {
    const { ctx, widgets } = uiStub("tui");
    const widget = new RunWidget();
    widget.accept(view());
    widget.render(ctx);
    expect(widgets).toHaveLength(1);
    const factory = widgets[0];
    if (typeof factory !== "function") throw new Error("expected a component factory");
    let redraws = 0;
    const component = factory({ requestRender: () => redraws++ });

    const narrow = component.render(30);
    const wide = component.render(120);
    expect(widest(narrow)).toBeLessThanOrEqual(30);
    expect(wide.join("\n")).toContain(LONG);
    expect(narrow.join("\n")).not.toContain(LONG);

    // A newer view asks Pi to draw again; the component stays the one Pi has.
    const before = view();
    const node = before.nodes[0];
    if (!node) throw new Error("no node");
    widget.accept(
      view({ revision: 2, nodes: [{ ...node, state: "failed", finishedAt: 2_500, errorCode: "boom" }] }),
    );
    widget.render(ctx);
    expect(redraws).toBe(1);
    expect(widgets).toHaveLength(1);
    expect(component.render(120).join("\n")).not.toBe(wide.join("\n"));
  });

  it("without a terminal UI (rpc), sends its lines at a fixed width, and only when they change", () => {
    const { ctx, widgets, statuses } = uiStub("rpc");
    const widget = new RunWidget();
    widget.accept(view());
    widget.render(ctx);
    widget.render(ctx);
    expect(widgets).toHaveLength(1);
    expect(statuses).toHaveLength(1);
    const lines = widgets[0];
    if (!Array.isArray(lines)) throw new Error("expected lines");
    expect(lines.join("\n")).toContain(LONG);
    expect(widest(lines)).toBeLessThanOrEqual(100);
    // An older view is refused and draws nothing.
    expect(widget.accept(view({ revision: 0 }))).toBe(false);
  });
});

describe("the session phase", () => {
  const ctx = (idle: boolean) => ({ isIdle: () => idle }) as unknown as ExtensionContext;
  const turn: OpenTurn = { requestId: "req:1", runId: "r-1", messageId: "msg:r-1:plan:1:step_prompt" };

  it("follows one agent run from session start to the next idle boundary", () => {
    let phase: SessionPhase = { kind: "detached" };
    const kinds: string[] = [];
    const step = (event: Parameters<typeof nextPhase>[1]) => {
      phase = nextPhase(phase, event);
      kinds.push(phase.kind);
    };
    step({ type: "session_start", ctx: ctx(true) });
    step({ type: "turn_triggered" });
    step({ type: "before_agent_start", promptId: "msg:r-1:a:1:step:1" });
    expect(phase).toMatchObject({ kind: "starting", promptId: "msg:r-1:a:1:step:1" });
    step({ type: "agent_start", turn: Promise.resolve(turn) });
    step({ type: "agent_end", ended: Promise.resolve() });
    step({ type: "settled" });
    step({ type: "shutdown" });
    expect(kinds).toEqual(["idle", "busy", "starting", "agent", "ending", "idle", "detached"]);
  });

  it("starts busy when Pi is busy, forgets the turn after a host restart, and ignores turn events while detached", async () => {
    expect(nextPhase({ kind: "detached" }, { type: "session_start", ctx: ctx(false) }).kind).toBe("busy");
    const agent = nextPhase(
      { kind: "idle", ctx: ctx(true) },
      { type: "agent_start", turn: Promise.resolve(turn) },
    );
    const restarted = nextPhase(agent, { type: "host_restarted" });
    expect(restarted.kind).toBe("agent");
    if (restarted.kind !== "agent") throw new Error("expected an agent phase");
    expect(await restarted.turn).toBeNull();
    expect(nextPhase({ kind: "detached" }, { type: "agent_start", turn: Promise.resolve(turn) })).toEqual({
      kind: "detached",
    });
  });
});

/** The text of a rendered line, without its colour codes. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const plainText = (line: string) => line.replace(ANSI, "");

/** A run at a parallel node: `lint` is done, `test` runs `unit` and reported progress. */
function forkedView(confidence: "low" | "medium" | "high"): RunView {
  const node = (path: string, kind: RunView["nodes"][number]["kind"], state: "running" | "succeeded") => ({
    path,
    kind,
    title: path.slice(path.lastIndexOf("/") + 1),
    state,
    visits: 1,
    attempt: 1,
    startedAt: 1_000,
    finishedAt: state === "running" ? null : 2_000,
    errorCode: null,
  });
  const manifest: GraphManifest = {
    version: 1,
    workflow: "checks",
    startPath: "all",
    exits: ["done"],
    maxSteps: 10,
    nodes: [
      { path: "all", name: "all", scope: "", kind: "parallel", title: "all" },
      { path: "all/lint/run", name: "run", scope: "all/lint", kind: "shell", title: "run" },
      { path: "all/test/unit", name: "unit", scope: "all/test", kind: "shell", title: "unit" },
    ],
    mounts: [],
    edges: [
      { from: "all", to: { kind: "exit", exit: "done" } },
      { from: "all/lint/run", to: { kind: "join", path: "all" } },
      { from: "all/test/unit", to: { kind: "join", path: "all" } },
    ],
    forks: [
      {
        path: "all",
        join: { kind: "all" },
        concurrency: null,
        branches: [
          { name: "lint", title: "lint", startPath: "all/lint/run" },
          { name: "test", title: "test", startPath: "all/test/unit" },
        ],
      },
    ],
  };
  return view({
    workflowName: "checks",
    manifest,
    nodes: [
      node("all", "parallel", "running"),
      node("all/lint/run", "shell", "succeeded"),
      node("all/test/unit", "shell", "running"),
    ],
    progress: [
      {
        path: "all/test/unit",
        visit: 1,
        done: 40,
        total: 160,
        message: "suite parser",
        updatedAt: 1_500,
        eta: { at: new Date(2026, 11, 1, 14, 5).getTime(), confidence },
      },
    ],
  });
}

describe("the run widget at a parallel node", () => {
  it("shows one line per branch, the running one with its node and progress, and the footer names it", () => {
    const { ctx, widgets, statuses } = uiStub("tui");
    const widget = new RunWidget();
    widget.accept(forkedView("medium"));
    widget.render(ctx);
    const factory = widgets[0];
    if (typeof factory !== "function") throw new Error("expected a component factory");
    const component = factory({ requestRender: () => {} });
    const lines = component.render(100).map(plainText);
    expect(lines.slice(1)).toEqual([
      // The glyphs are this terminal's (Unicode or ASCII); the words are not.
      expect.stringMatching(/^ . . lint {9}succeeded {2}1\.0s$/),
      expect.stringMatching(
        /^ . . test . unit {2}#1 {2}running {2}40\/160 \S{8} . done about 14:05 . suite parser$/,
      ),
    ]);
    expect(statuses.at(-1)).toBe("wf checks [running] all › test › unit 40/160 · ~14:05");
    for (const width of [20, 33, 50])
      for (const line of component.render(width)) expect(plainText(line).length).toBeLessThanOrEqual(width);
  });

  it("says how sure the estimate is in the footer: not at all, about, roughly", () => {
    const footers = (["high", "medium", "low"] as const).map((confidence) => {
      const { ctx, statuses } = uiStub("rpc");
      const widget = new RunWidget();
      widget.accept(forkedView(confidence));
      widget.render(ctx);
      return statuses.at(-1);
    });
    expect(footers).toEqual([
      "wf checks [running] all › test › unit 40/160 · by 14:05",
      "wf checks [running] all › test › unit 40/160 · ~14:05",
      "wf checks [running] all › test › unit 40/160 · ~14:05?",
    ]);
  });
});
