import type { GraphManifest, NodeProgress, NodeView, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { AgentProgressLines, NodeProgressLines } from "../src/agent-progress-lines.js";
import { OUTPUT_SCHEMAS, statusOutput } from "../src/output-schemas.js";
import { renderRunStatus } from "../src/render-run.js";
import { createStyle } from "../src/style.js";

const plain = createStyle(false);
const NOW = 120_000;

function node(path: string, kind: NodeView["kind"], patch: Partial<NodeView> = {}): NodeView {
  return {
    path,
    kind,
    title: path.slice(path.lastIndexOf("/") + 1),
    state: "pending",
    visits: 0,
    attempt: 0,
    startedAt: null,
    finishedAt: null,
    errorCode: null,
    ...patch,
  };
}

const ran = { state: "succeeded", visits: 1, attempt: 1, startedAt: 1_000, finishedAt: 3_000 } as const;
const running = { state: "running", visits: 1, attempt: 1, startedAt: 10_000, finishedAt: null } as const;

/** prepare → checks (parallel, any: lint [run]; test [unit → report]; docs [check]) → ship → done. */
const manifest: GraphManifest = {
  version: 1,
  workflow: "checks",
  startPath: "prepare",
  exits: ["done"],
  maxSteps: 20,
  nodes: [],
  mounts: [],
  edges: [
    { from: "prepare", to: { kind: "node", path: "checks" } },
    { from: "checks", to: { kind: "node", path: "ship" } },
    { from: "checks/lint/run", to: { kind: "join", path: "checks" } },
    { from: "checks/test/unit", to: { kind: "node", path: "checks/test/report" } },
    { from: "checks/test/report", to: { kind: "join", path: "checks" } },
    { from: "checks/docs/check", to: { kind: "join", path: "checks" } },
    { from: "ship", to: { kind: "exit", exit: "done" } },
  ],
  forks: [
    {
      path: "checks",
      join: { kind: "atLeast", count: 2 },
      concurrency: 2,
      branches: [
        { name: "lint", title: "lint", startPath: "checks/lint/run" },
        { name: "test", title: "test", startPath: "checks/test/unit" },
        { name: "docs", title: "docs", startPath: "checks/docs/check" },
      ],
    },
  ],
};

function progressOf(confidence: "low" | "medium" | "high", done = 3): NodeProgress {
  return {
    path: "checks/test/unit",
    visit: 1,
    done,
    total: 12,
    message: "suite parser",
    updatedAt: NOW - 2_000,
    eta: { at: NOW + 3 * 60_000, confidence },
  };
}

function forked(progress: NodeProgress[], patch: Partial<RunView> = {}): RunView {
  // The host lists nodes in the manifest's order, root nodes first: status regroups them.
  const nodes = [
    node("prepare", "compute", ran),
    node("checks", "parallel", running),
    node("ship", "shell"),
    node("checks/lint/run", "shell", ran),
    node("checks/test/unit", "shell", running),
    node("checks/test/report", "compute"),
    node("checks/docs/check", "agent", running),
  ];
  return {
    runId: "checks-1",
    workflowName: "checks",
    source: { kind: "file", path: "/tmp/checks.workflow.ts", sha256: "0".repeat(64) },
    title: null,
    status: "running",
    outcome: null,
    origin: { kind: "cli" },
    parentRunId: null,
    rootRunId: "checks-1",
    originCommand: "start",
    restartNumber: 0,
    paused: false,
    recoveryReason: null,
    error: null,
    revision: 4,
    createdAt: 1_000,
    startedAt: 1_000,
    finishedAt: null,
    currentWork: { kind: "worker", launchId: "l-1", path: "checks/test/unit" },
    cursor: null,
    nodes,
    manifest,
    progress,
    agentProgress: {
      path: "checks/docs/check",
      visit: 1,
      attempt: 1,
      seq: 2,
      toolCalls: 2,
      kind: "tool",
      text: "read README.md",
    },
    ...patch,
  };
}

describe("piw status at a parallel node", () => {
  it("lists each branch's nodes under the fork, indented, with progress and agent activity", () => {
    const lines = renderRunStatus(forked([progressOf("medium")]), plain, NOW);
    const nodes = lines.slice(lines.indexOf("nodes") + 1);
    expect(nodes).toEqual([
      "  ✓ prepare                 compute   #1  2.0s",
      "  ▶ checks                  parallel  #1  running 1m50s  join: at least 2 of 3 branches, 2 at a time",
      "    branch lint  ✓ succeeded",
      "      ✓ checks/lint/run     shell     #1  2.0s",
      "    branch test  ▶ running",
      "      ▶ checks/test/unit    shell     #1  running 1m50s",
      "                            3/12 ██▌░░░░░░░ · about 3 min left · suite parser",
      "      · checks/test/report  compute   pending",
      "    branch docs  ▶ running",
      "      ▶ checks/docs/check   agent     #1  running 1m50s",
      "                            → read README.md",
      "  · ship                    shell     pending",
    ]);
  });

  it("says each confidence of the estimate its own way", () => {
    const words = { high: "· 3 min left ·", medium: "· about 3 min left ·", low: "· roughly 3 min left ·" };
    for (const confidence of ["high", "medium", "low"] as const) {
      const text = renderRunStatus(forked([progressOf(confidence)]), plain, NOW).join("\n");
      expect(text).toContain(`3/12 ██▌░░░░░░░ ${words[confidence]} suite parser`);
    }
  });

  it("keeps the view's order for a run with no parallel node", () => {
    const flat = forked([], { manifest: { ...manifest, forks: [] }, agentProgress: undefined });
    const nodes = renderRunStatus(flat, plain, NOW).filter((line) => line.startsWith("  "));
    expect(nodes.map((line) => line.trim().split(/\s+/)[1])).toEqual(flat.nodes.map((n) => n.path));
  });

  it("carries progress and the agent's latest fact in --json", () => {
    const view = forked([progressOf("low")]);
    const parsed = OUTPUT_SCHEMAS.status.parse(JSON.parse(JSON.stringify(statusOutput(view))));
    expect(parsed.progress).toEqual([progressOf("low")]);
    expect(parsed.agentProgress?.text).toBe("read README.md");
    expect(parsed.manifest.forks?.[0]?.branches.map((b) => b.name)).toEqual(["lint", "test", "docs"]);
  });

  it("shows each running agent step's own activity under its own node, and in --json", () => {
    const view = forked([], { agentActivity: [unitAgent(1), docsFact(2)], agentProgress: docsFact(2) });
    const nodes = renderRunStatus(view, plain, NOW);
    const under = (path: string) => nodes[nodes.findIndex((line) => line.includes(`${path} `)) + 1]?.trim();
    expect(under("checks/test/unit")).toBe("→ grep parse src");
    expect(under("checks/docs/check")).toBe("→ read README.md");
    const parsed = OUTPUT_SCHEMAS.status.parse(JSON.parse(JSON.stringify(statusOutput(view))));
    expect(parsed.agentActivity?.map((p) => [p.path, p.visit, p.text])).toEqual([
      ["checks/test/unit", 1, "grep parse src"],
      ["checks/docs/check", 1, "read README.md"],
    ]);
  });
});

const docsFact = (seq: number, toolCalls = 2) => ({
  path: "checks/docs/check",
  visit: 1,
  attempt: 1,
  seq,
  toolCalls,
  kind: "tool" as const,
  text: "read README.md",
});
const unitAgent = (seq: number, toolCalls = 1) => ({
  ...docsFact(seq, toolCalls),
  path: "checks/test/unit",
  text: "grep parse src",
});

describe("piw run's follow lines", () => {
  it("print a step's progress at its first report, each new message and each tenth, not every update", () => {
    const lines = new NodeProgressLines(plain);
    const at = (done: number, message = "suite parser") =>
      lines.changes(forked([{ ...progressOf("high", done), total: 100, message }]));
    expect(at(3)).toEqual([
      "    checks/test/unit: 3/100 ▎░░░░░░░░░ · done by " +
        `${String(new Date(NOW + 180_000).getHours()).padStart(2, "0")}:${String(new Date(NOW + 180_000).getMinutes()).padStart(2, "0")}` +
        " · suite parser",
    ]);
    expect(at(7)).toEqual([]);
    expect(at(12)).toHaveLength(1);
    expect(at(15)).toEqual([]);
    expect(at(15, "suite lexer")[0]).toContain("15/100 █▌░░░░░░░░ ·");
  });

  it("print an isolated agent's tool calls with the same words as every other view", () => {
    const lines = new AgentProgressLines(plain);
    expect(lines.changes(forked([]))).toEqual(["    checks/docs/check: → read README.md (+1 more)"]);
  });

  it("print each running agent step's own facts under its own path, counting its own tool calls", () => {
    const lines = new AgentProgressLines(plain);
    const at = (activity: ReturnType<typeof docsFact>[]) =>
      lines.changes(forked([], { agentActivity: activity, agentProgress: activity.at(-1) }));
    expect(at([unitAgent(1), docsFact(2, 1)])).toEqual([
      "    checks/test/unit: → grep parse src",
      "    checks/docs/check: → read README.md",
    ]);
    // Only the step that moved prints; the other one's count is not disturbed by it.
    expect(at([unitAgent(1), docsFact(3, 3)])).toEqual(["    checks/docs/check: → read README.md (+1 more)"]);
    expect(at([unitAgent(4, 2), docsFact(3, 3)])).toEqual(["    checks/test/unit: → grep parse src"]);
  });
});
