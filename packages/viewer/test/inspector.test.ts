import { describe, expect, it } from "vitest";
import { jsonLines, renderInspector, renderRunTable } from "../src/index.js";
import { event, historyOf } from "./history-fixture.js";
import { chainManifest, runViewOf, withNode } from "./run-view-fixture.js";

describe("jsonLines", () => {
  it("pretty-prints JSON and folds long strings, long lists and deep values", () => {
    expect(jsonLines({ a: 1, b: [true, null], c: {} })).toEqual([
      "{",
      '  "a": 1,',
      '  "b": [',
      "    true,",
      "    null",
      "  ],",
      '  "c": {}',
      "}",
    ]);
    expect(jsonLines("x".repeat(50), { maxString: 10 })).toEqual([`"${"x".repeat(10)}… (+40 chars)"`]);
    expect(jsonLines([1, 2, 3, 4], { maxEntries: 2 })).toEqual([
      "[",
      "  1,",
      "  2,",
      "  … 2 more items",
      "]",
    ]);
    expect(jsonLines({ a: { b: { c: 1 } } }, { maxDepth: 1 })).toEqual(["{", '  "a": {… 1 keys}', "}"]);
  });
});

describe("renderInspector", () => {
  const view = withNode(runViewOf(chainManifest(3)), "n1", {
    state: "failed",
    visits: 1,
    attempt: 2,
    startedAt: 0,
    finishedAt: 1_500,
    errorCode: "node_failed",
  });
  const history = historyOf("run_01", [event({ type: "run.queued", data: { command: "start" } })], {
    steps: [
      {
        path: "n1",
        visit: 1,
        attempt: 1,
        status: "failed",
        startedAt: 0,
        finishedAt: 500,
        errorCode: "node_failed",
        error: "first try broke",
        output: null,
      },
      {
        path: "n1",
        visit: 1,
        attempt: 2,
        status: "succeeded",
        startedAt: 600,
        finishedAt: 1_500,
        errorCode: null,
        error: null,
        output: { ok: true, notes: "n".repeat(400) },
      },
    ],
    effects: [
      {
        effectId: "e1",
        path: "n1",
        visit: 1,
        effectType: "http",
        ordinal: 0,
        mode: "idempotent",
        status: "settled",
        request: { url: "x" },
        result: { status: 200 },
        errorCode: null,
        error: null,
        reservedAt: 0,
        settledAt: 10,
      },
      {
        effectId: "e2",
        path: "n1",
        visit: 1,
        effectType: "deploy",
        ordinal: 1,
        mode: "manual",
        status: "reserved",
        request: {},
        result: null,
        errorCode: null,
        error: null,
        reservedAt: 0,
        settledAt: null,
      },
    ],
    messages: [
      {
        messageId: "m1",
        kind: "step_prompt",
        path: "n1",
        visit: 1,
        status: "delivered",
        body: "Do the thing.\nThen report.",
        createdAt: 0,
        deliveredAt: 1,
      },
    ],
    turns: [
      {
        turnId: "t1",
        path: "n1",
        visit: 1,
        status: "ended",
        endReason: "submitted",
        startedAt: 0,
        endedAt: 2_000,
      },
    ],
  });

  it("shows state, each attempt's error or output, effects, prompts and turns", () => {
    const lines = renderInspector(view, history, "n1", { width: 80 });
    const text = lines.join("\n");
    expect(lines[0]).toBe("λ n1  compute");
    expect(lines[1]).toBe("✗ failed  visits 1  attempt 2  1.5s  node_failed");
    expect(text).toContain("visit 1, attempt 1: failed  500ms\nerror node_failed\n  first try broke");
    expect(text).toContain('output\n  {\n    "ok": true,');
    // The folded string wraps across lines; joined again it ends with the fold's note.
    expect(text.replace(/\s+/g, "")).toMatch(/"notes":"n{160}…\(\+240chars\)"/);
    expect(text).toContain(
      'effects\n  http #0 (visit 1, idempotent)  settled\n    {\n      "status": 200\n    }',
    );
    expect(text).toContain("deploy #1 (visit 1, manual)  reserved");
    expect(text).toContain(
      "prompts\n  step_prompt (visit 1)  delivered\n    Do the thing.\n    Then report.",
    );
    expect(text).toContain("turns\n  t1 (visit 1)  ended: submitted  2.0s");
    for (const line of renderInspector(view, history, "n1", { width: 24 }))
      expect(line.length).toBeLessThanOrEqual(24);
  });

  it("says when the history is loading and when the node was never visited", () => {
    expect(renderInspector(view, null, "n1", { width: 80 }).at(-1)).toBe("loading the run's history…");
    expect(renderInspector(view, history, "n2", { width: 80 }).at(-1)).toBe("not visited yet");
    expect(renderInspector(view, history, "ghost", { width: 80 })).toEqual(["no node ghost in this run"]);
  });
});

describe("renderRunTable", () => {
  it("shows status, workflow, started, duration, origin and a parked run's reason", () => {
    const done = runViewOf(chainManifest(1), {
      runId: "a-1",
      status: "done",
      outcome: "completed",
      startedAt: 1_000,
      finishedAt: 3_500,
    });
    const parked = runViewOf(chainManifest(1), {
      runId: "b-2",
      workflowName: "deploy",
      origin: { kind: "pi", sessionId: "0123456789abcdef" },
      status: "parked",
      startedAt: 1_000,
      recoveryReason: { code: "manual_effect_unsettled", message: "deploy may have happened", effectId: "e" },
    });
    expect(renderRunTable([done, parked], { width: 120, selected: 1, now: 61_000 })).toEqual([
      "  STATUS       WORKFLOW  STARTED  DURATION              ORIGIN       RUN / REASON",
      "  ✓ completed  chain     1m ago   2.5s      ▍           cli          a-1",
      "› ‼ parked     deploy    1m ago   1m00s     ██████████  pi 01234567  manual_effect_unsettled: deploy may have happened",
    ]);
  });
});

describe("renderRunTable's input column", () => {
  const run = (runId: string, inputSummary: string) =>
    runViewOf(chainManifest(1), {
      runId,
      status: "done",
      outcome: "completed",
      startedAt: 1_000,
      finishedAt: 3_500,
      inputSummary,
    });
  const runs = [
    run("a-1", 'task: "fix the login bug"'),
    run("b-2", `{change: "${"z".repeat(60)}", dryRun: true}`),
  ];

  it("gets its own column on a wide terminal, cut to the column with an ellipsis", () => {
    const lines = renderRunTable(runs, { width: 140, now: 61_000 });
    expect(lines[0]).toMatch(/ORIGIN {2}INPUT {37}RUN \/ REASON$/);
    expect(lines[1]).toContain(`cli     task: "fix the login bug"${" ".repeat(17)}a-1`);
    expect(lines[2]).toContain(`cli     {change: "${"z".repeat(29)}…  b-2`);
  });

  it("is the first column dropped when the terminal is narrow", () => {
    const lines = renderRunTable(runs, { width: 70, now: 61_000 });
    expect(lines[0]).not.toContain("INPUT");
    expect(lines[1]).toMatch(/cli {5}a-1$/);
    expect(lines.join("\n")).not.toContain("login");
  });
});

describe("renderInspector of an isolated agent step", () => {
  const view = withNode(runViewOf(chainManifest(3)), "n1", {
    state: "succeeded",
    visits: 1,
    attempt: 2,
    startedAt: 0,
    finishedAt: 3_000,
  });
  const session = (ordinal: number, status: "reserved" | "settled", result: unknown) => ({
    effectId: `run_01/n1#1/agent.session/${ordinal}`,
    path: "n1",
    visit: 1,
    effectType: "agent.session",
    ordinal,
    mode: "idempotent" as const,
    status,
    request: { attempt: ordinal + 1 },
    result: result as never,
    errorCode: null,
    error: null,
    reservedAt: 0,
    settledAt: status === "settled" ? 3_000 : null,
  });
  const history = historyOf("run_01", [event({ type: "run.queued", data: { command: "start" } })], {
    effects: [
      session(0, "reserved", null),
      session(1, "settled", {
        model: "fake/fake-model",
        tokensIn: 30,
        tokensOut: 15,
        cost: 0.0012,
        durationMs: 2_500,
        transcript: [
          { role: "user", text: "Review it." },
          { role: "tool_call", tool: "read", arguments: '{"path":"README.md"}' },
          { role: "tool_result", tool: "read", text: "# Widget", isError: false },
          { role: "tool_call", tool: "workflow", arguments: '{"action":"submit","output":1}' },
        ],
        transcriptOmitted: 0,
      }),
    ],
  });

  it("shows each attempt's model, tokens, cost and transcript instead of the raw record", () => {
    const lines = renderInspector(view, history, "n1", { width: 100 });
    const at = lines.indexOf("isolated session");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 9)).toEqual([
      "n1 visit 1, attempt 1",
      "  (no record: the session did not finish)",
      "n1 visit 1, attempt 2",
      "  fake/fake-model  30 in / 15 out tokens, cost 0.0012  2.5s",
      "  user: Review it.",
      '  → read {"path":"README.md"}',
      "  ← read: # Widget",
      '  → workflow {"action":"submit","output":1}',
    ]);
    expect(lines).not.toContain("effects");
  });
});
