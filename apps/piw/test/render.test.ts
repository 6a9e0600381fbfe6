import type { NodeView, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { renderRunList } from "../src/render-list.js";
import {
  formatDuration,
  NodeChangeTracker,
  renderFinalLines,
  renderRunStatus,
  settledWord,
} from "../src/render-run.js";
import { runStateWord } from "../src/render-words.js";
import { colorWanted, createStyle } from "../src/style.js";

const plain = createStyle(false);

function node(path: string, patch: Partial<NodeView> = {}): NodeView {
  return {
    path,
    kind: "compute",
    title: path,
    state: "pending",
    visits: 0,
    attempt: 0,
    startedAt: null,
    finishedAt: null,
    errorCode: null,
    ...patch,
  };
}

function view(patch: Partial<RunView> = {}): RunView {
  return {
    runId: "hello-1",
    workflowName: "hello",
    source: { kind: "file", path: "/tmp/hello.workflow.ts", sha256: "0".repeat(64) },
    title: null,
    status: "running",
    outcome: null,
    origin: { kind: "cli" },
    parentRunId: null,
    rootRunId: "hello-1",
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
    nodes: [node("greet"), node("echo", { kind: "shell" })],
    manifest: {
      version: 1,
      workflow: "hello",
      startPath: "greet",
      exits: ["done"],
      maxSteps: 10,
      nodes: [],
      mounts: [],
      edges: [],
    },
    ...patch,
  };
}

describe("colour", () => {
  it("is on only for a terminal, and NO_COLOR turns it off", () => {
    expect(colorWanted({ isTTY: true }, {})).toBe(true);
    expect(colorWanted({ isTTY: false }, {})).toBe(false);
    expect(colorWanted({}, {})).toBe(false);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    // An empty NO_COLOR does not count (no-color.org).
    expect(colorWanted({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
    expect(createStyle(true).red("x")).toBe("\u001b[31mx\u001b[39m");
    expect(createStyle(false).red("x")).toBe("x");
  });
});

describe("status words", () => {
  it("say the outcome once a run ended, else its status", () => {
    expect(runStateWord({ status: "done", outcome: "completed" })).toBe("completed");
    expect(runStateWord({ status: "done", outcome: "waiting" })).toBe("waiting");
    expect(runStateWord({ status: "failed", outcome: "timed_out" })).toBe("timed out");
    expect(runStateWord({ status: "parked", outcome: null })).toBe("parked");
    expect(runStateWord({ status: "queued", outcome: null })).toBe("queued");
  });

  it("settle a followed run at its end, at a park, but not while the host relaunches a lost worker", () => {
    expect(settledWord(view({ status: "running" }))).toBeUndefined();
    expect(settledWord(view({ status: "cancelled", outcome: "cancelled" }))).toBe("cancelled");
    const lost = { code: "worker_lost" as const, message: "worker died", launchId: "l1" };
    expect(settledWord(view({ status: "parked", recoveryReason: lost }))).toBeUndefined();
    const stuck = { code: "worker_lost_no_progress" as const, message: "worker died twice", launchId: "l1" };
    expect(settledWord(view({ status: "parked", recoveryReason: stuck }))).toBe("parked");
  });
});

describe("node lines", () => {
  it("print each change of state, visit or attempt once", () => {
    const tracker = new NodeChangeTracker(plain);
    expect(tracker.changes(view())).toEqual([]);
    const running = view({
      nodes: [node("greet", { state: "running", visits: 1, attempt: 1, startedAt: 5 })],
    });
    expect(tracker.changes(running)).toEqual(["  ▶ greet  compute  #1  running"]);
    expect(tracker.changes(running)).toEqual([]);
    const done = view({
      nodes: [
        node("greet", { state: "succeeded", visits: 1, attempt: 1, startedAt: 5, finishedAt: 17 }),
        node("echo", { kind: "shell", state: "failed", visits: 2, attempt: 3, errorCode: "node_failed" }),
      ],
    });
    expect(tracker.changes(done)).toEqual([
      "  ✓ greet  compute  #1  12ms",
      "  ✗ echo   shell    #2 (attempt 3)  failed: node_failed",
    ]);
  });

  it("print every visit's end once, also the visits a later view's nodes no longer show", () => {
    const tracker = new NodeChangeTracker(plain);
    const test = (patch: Partial<NodeView>) => node("test", { kind: "shell", attempt: 1, ...patch });
    expect(tracker.changes(view({ nodes: [test({ state: "running", visits: 1, startedAt: 1 })] }))).toEqual([
      "  ▶ test  shell  #1  running",
    ]);
    // The next view shows the third visit running: the first two ended in between.
    const passed = (visit: number, state: "failed" | "succeeded", at: number) => ({
      path: "test",
      visit,
      attempt: 1,
      state,
      startedAt: at,
      finishedAt: at + 4,
      errorCode: state === "failed" ? "node_failed" : null,
    });
    const third = view({
      nodes: [
        test({ state: "running", visits: 3, startedAt: 30 }),
        node("fix", { state: "succeeded", visits: 2, attempt: 1, startedAt: 25, finishedAt: 28 }),
      ],
      passed: [passed(1, "failed", 1), passed(2, "failed", 20)],
    });
    expect(tracker.changes(third)).toEqual([
      "  ✗ test  shell    #1  4ms  failed: node_failed",
      "  ✗ test  shell    #2  4ms  failed: node_failed",
      "  ✓ fix   compute  #2  3ms",
      "  ▶ test  shell    #3  running",
    ]);
    // A view that passes on what was printed already (a subscriber's views overlap) prints nothing again.
    expect(tracker.changes({ ...third, revision: third.revision + 1 })).toEqual([]);
    // Too many to carry: the view says how many it left out, before the ones it carries.
    const many = view({
      nodes: [test({ state: "succeeded", visits: 9, startedAt: 90, finishedAt: 91 })],
      passed: [passed(8, "succeeded", 80)],
      passedOmitted: 4,
    });
    expect(tracker.changes(many)).toEqual([
      "  … 4 earlier node visits not shown",
      "  ✓ test  shell  #8  4ms",
      "  ✓ test  shell  #9  1ms",
    ]);
  });

  it("print the changes of one view in the order they happened, not the graph's", () => {
    const tracker = new NodeChangeTracker(plain);
    const joined = view({
      nodes: [
        node("checks", {
          kind: "parallel",
          state: "succeeded",
          visits: 1,
          attempt: 1,
          startedAt: 1,
          finishedAt: 40,
        }),
        node("report", { state: "succeeded", visits: 1, attempt: 1, startedAt: 41, finishedAt: 45 }),
        node("checks/lint/run", { state: "succeeded", visits: 1, attempt: 1, startedAt: 2, finishedAt: 30 }),
        node("checks/tests/run", { state: "succeeded", visits: 1, attempt: 1, startedAt: 2, finishedAt: 20 }),
      ],
    });
    expect(tracker.changes(joined).map((line) => line.trim().split(/\s+/)[1])).toEqual([
      "checks/tests/run",
      "checks/lint/run",
      "checks",
      "report",
    ]);
  });

  it("format durations compactly", () => {
    expect(formatDuration(12.4)).toBe("12ms");
    expect(formatDuration(1_450)).toBe("1.4s");
    expect(formatDuration(123_000)).toBe("2m03s");
    expect(formatDuration(3_900_000)).toBe("1h05m");
  });
});

describe("a waiting checkpoint", () => {
  const checkpoint = {
    path: "approve",
    visit: 1,
    prompt: "Approve the plan?\nIt has 2 steps.",
    answeredBy: "human" as const,
    answerSchema: {
      type: "object",
      properties: { approved: { type: "boolean" }, comment: { type: "string" } },
      required: ["approved"],
    },
  };
  const waiting = view({
    status: "done",
    outcome: "waiting",
    cursor: { path: "approve", visit: 1 },
    checkpoint,
  });

  it("is shown by piw status with its prompt, who answers, its schema and a valid answer", () => {
    const lines = renderRunStatus(waiting, plain, 2_000);
    const at = lines.indexOf("at        approve #1");
    expect(lines.slice(at + 1, at + 5)).toEqual([
      "asks      Approve the plan?\n          It has 2 steps.",
      "answers   a person",
      `schema    ${JSON.stringify(checkpoint.answerSchema)}`,
      `answer it with: piw answer hello-1 '{"approved":true}'`,
    ]);
  });

  it("closes a followed run with a valid answer, or says the model answers it", () => {
    expect(renderFinalLines(waiting, plain)[1]).toBe(
      `answer it with: piw answer hello-1 '{"approved":true}'`,
    );
    const forModel = view({ ...waiting, checkpoint: { ...checkpoint, answeredBy: "model" } });
    expect(renderFinalLines(forModel, plain)[1]).toBe(
      `the model answers it with the workflow tool (answer: '{"approved":true}')`,
    );
  });
});

describe("closing lines", () => {
  it("tell how to answer a waiting run, why a run is parked, and why one failed", () => {
    const waiting = view({ status: "done", outcome: "waiting", cursor: { path: "approve", visit: 1 } });
    expect(renderFinalLines(waiting, plain)).toEqual([
      "⏸ hello waiting at approve  hello-1",
      "answer it with: piw answer hello-1 '<json>'",
    ]);
    const parked = view({
      status: "parked",
      recoveryReason: {
        code: "manual_effect_unsettled",
        message: "a manual effect may have run",
        effectId: "e",
      },
    });
    expect(renderFinalLines(parked, plain)[0]).toBe(
      "‼ hello parked: a manual effect may have run (manual_effect_unsettled)  hello-1",
    );
    const failed = view({
      status: "failed",
      outcome: "failed",
      error: { code: "node_failed", message: "exit 3" },
    });
    expect(renderFinalLines(failed, plain)).toEqual(["✗ hello failed: node_failed: exit 3  hello-1"]);
  });

  it("shows the time left on a running step in piw status", () => {
    const running = view({
      nodes: [
        node("ask", {
          kind: "agent",
          state: "running",
          visits: 1,
          attempt: 1,
          startedAt: 1_000,
          deadlineAt: 1_801_000,
        }),
      ],
    });
    const status = renderRunStatus(running, plain, 601_000).join("\n");
    expect(status).toContain("running 10m00s  20m00s left");
    const late = renderRunStatus(running, plain, 2_000_000).join("\n");
    expect(late).toContain("past its deadline");
    const open = view({
      nodes: [node("ask", { kind: "agent", state: "running", visits: 1, attempt: 1, startedAt: 1_000 })],
    });
    expect(renderRunStatus(open, plain, 601_000).join("\n")).not.toContain("left");
  });

  it("render status and list without colour codes when colour is off", () => {
    const done = view({ status: "done", outcome: "completed", finishedAt: 2_000 });
    const status = renderRunStatus(done, plain, 5_000);
    expect(status).toContain("status    ✓ completed");
    expect(status).toContain("duration  1.0s");
    expect(status.join("\n")).not.toContain("\u001b[");
    const list = renderRunList([{ ...done, inputSummary: 'task: "say hi"' }], plain, 5_000);
    expect(list[0]).toMatch(/^RUN +WORKFLOW +STATUS +CREATED +DURATION +INPUT$/);
    expect(list[1]).toMatch(/^hello-1 +hello +✓ completed +4s ago +1\.0s +task: "say hi"$/);
    expect(renderRunList([], plain)).toEqual(["no runs"]);
  });

  it("lists a run's run-wide progress after its state, with the clock time it ends by", () => {
    const endsBy = new Date(2026, 11, 4, 20, 20).getTime();
    const parked = view({
      status: "parked",
      recoveryReason: {
        code: "waiting",
        message: "waiting",
        path: "pause",
        visit: 3,
        until: endsBy - 60_000,
      },
      runProgress: {
        path: "decide",
        visit: 3,
        done: 3,
        total: 100,
        message: "not met yet",
        updatedAt: 4_000,
        eta: { at: endsBy, confidence: "high" },
      },
    });
    const [, row] = renderRunList([parked], plain, 5_000);
    expect(row).toMatch(/ parked 3\/100 · by 20:20 +\S+ ago/);
    const [, without] = renderRunList([{ ...parked, runProgress: undefined }], plain, 5_000);
    expect(without).not.toContain("3/100");
  });
});

describe("a run's output, interrupted nodes and answered checkpoints", () => {
  it("shows a short output on one line and folds a long one after 20 lines", () => {
    const short = renderFinalLines(
      view({ status: "done", outcome: "completed", output: { kind: "json", value: { ok: true } } }),
      plain,
    );
    expect(short.at(-1)).toBe('output    {"ok":true}');

    const items = Array.from({ length: 30 }, (_, i) => `item number ${i} of a long list`);
    const long = renderRunStatus(
      view({ status: "done", outcome: "completed", output: { kind: "json", value: { items } } }),
      plain,
    );
    const at = long.indexOf("output");
    expect(long.slice(at + 1, at + 3)).toEqual(["  {", '    "items": [']);
    expect(long[at + 21]).toBe("  … 14 more lines (piw status hello-1 --json)");
    const huge = renderRunStatus(view({ input: { kind: "omitted", bytes: 99_000 } }), plain);
    expect(huge).toContain("input     99000 bytes, too large to show");
  });

  it("says why a node that was under way stopped", () => {
    const lines = renderRunStatus(
      view({
        status: "cancelled",
        outcome: "cancelled",
        nodes: [node("wait", { kind: "shell", state: "cancelled", visits: 1, attempt: 1, startedAt: 1 })],
      }),
      plain,
    );
    expect(lines.at(-1)).toBe("  ■ wait  shell  #1  cancelled");
    const paused = renderRunStatus(
      view({
        status: "parked",
        paused: true,
        nodes: [node("work", { state: "paused", visits: 1, attempt: 1 })],
      }),
      plain,
    );
    expect(paused.at(-1)).toBe("  ⏸ work  compute  #1  paused");
  });

  it("says when a run on the clock goes on instead of how to resume it, unless it is paused", () => {
    const until = Date.UTC(2026, 11, 1, 18, 30, 5);
    const reason = { code: "waiting", message: "w", path: "hold", visit: 1, until } as const;
    const waiting = view({ status: "parked", recoveryReason: reason });
    expect(renderFinalLines(waiting, plain)).toEqual([
      "‼ hello parked: waiting until 2026-12-01 18:30:05 UTC  hello-1",
      "it goes on by itself at 2026-12-01 18:30:05 UTC   or cancel it with: piw cancel hello-1",
    ]);
    const paused = view({ status: "parked", paused: true, recoveryReason: reason });
    expect(renderFinalLines(paused, plain)[1]).toBe(
      "resume it with: piw resume hello-1   or cancel it with: piw cancel hello-1",
    );
  });

  it("names the continuation of an answered checkpoint in status and list", () => {
    const answered = { status: "done", outcome: "waiting", continuedAs: "hello-2" } as const;
    expect(renderRunStatus(view(answered), plain)).toContain("status    ⏸ answered → hello-2");
    expect(renderRunList([view(answered)], plain, 0)[1]).toContain("⏸ answered → hello-2");
  });
});
