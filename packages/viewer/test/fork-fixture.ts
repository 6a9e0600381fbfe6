import type { GraphManifest, NodeProgress, RunView } from "@piw/protocol";
import { manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

/**
 * plan → review (parallel: lint [run]; test [unit → integration → report]; docs [check]) → summarize
 * → done. The branches end in edges to the join; the fork's own edge is where the run goes after it.
 */
export const forkManifest: GraphManifest = {
  version: 1,
  workflow: "parallel-review",
  startPath: "plan",
  exits: ["done"],
  maxSteps: 100,
  nodes: [
    manifestNode("plan", "agent"),
    manifestNode("review", "parallel"),
    manifestNode("review/lint/run", "shell"),
    manifestNode("review/test/unit", "shell"),
    manifestNode("review/test/integration", "shell"),
    manifestNode("review/test/report", "compute"),
    manifestNode("review/docs/check", "agent"),
    manifestNode("summarize", "compute"),
  ],
  mounts: [],
  edges: [
    { from: "plan", to: { kind: "node", path: "review" } },
    { from: "review", to: { kind: "node", path: "summarize" } },
    { from: "review/lint/run", to: { kind: "join", path: "review" } },
    { from: "review/test/unit", to: { kind: "node", path: "review/test/integration" } },
    { from: "review/test/integration", to: { kind: "node", path: "review/test/report" } },
    { from: "review/test/report", to: { kind: "join", path: "review" } },
    { from: "review/docs/check", to: { kind: "join", path: "review" } },
    { from: "summarize", to: { kind: "exit", exit: "done" } },
  ],
  forks: [
    {
      path: "review",
      join: { kind: "all" },
      concurrency: null,
      branches: [
        { name: "lint", title: "lint", startPath: "review/lint/run" },
        { name: "test", title: "test", startPath: "review/test/unit" },
        { name: "docs", title: "docs", startPath: "review/docs/check" },
      ],
    },
  ],
};

const ran = (startedAt: number, finishedAt: number) => ({
  state: "succeeded" as const,
  visits: 1,
  attempt: 1,
  startedAt,
  finishedAt,
});
const running = (startedAt: number) => ({
  state: "running" as const,
  visits: 1,
  attempt: 1,
  startedAt,
  finishedAt: null,
});

/** Mid-run: lint done, test at `integration` (with progress), docs' agent checking (with a tool call). */
export function forkView(progress: NodeProgress[] = [], overrides: Partial<RunView> = {}): RunView {
  let view = runViewOf(forkManifest, { runId: "par-1", revision: 9, ...overrides });
  view = withNode(view, "plan", ran(1_000, 2_000));
  view = withNode(view, "review", running(2_000));
  view = withNode(view, "review/lint/run", ran(2_000, 3_500));
  view = withNode(view, "review/test/unit", ran(2_000, 4_000));
  view = withNode(view, "review/test/integration", running(4_000));
  view = withNode(view, "review/docs/check", running(2_000));
  return { ...view, progress };
}

/** A parallel node with `count` one-node branches `b0`…, the first `runningCount` of them running. */
export function wideForkView(count: number, runningCount: number): RunView {
  const names = Array.from({ length: count }, (_, i) => `b${i}`);
  const manifest: GraphManifest = {
    version: 1,
    workflow: "fan-out",
    startPath: "fan",
    exits: ["done"],
    maxSteps: 100,
    nodes: [
      manifestNode("fan", "parallel"),
      ...names.map((name) => manifestNode(`fan/${name}/work`, "shell")),
    ],
    mounts: [],
    edges: [
      { from: "fan", to: { kind: "exit", exit: "done" } },
      ...names.map((name) => ({ from: `fan/${name}/work`, to: { kind: "join" as const, path: "fan" } })),
    ],
    forks: [
      {
        path: "fan",
        join: { kind: "atLeast", count: 2 },
        concurrency: 4,
        branches: names.map((name) => ({ name, title: name, startPath: `fan/${name}/work` })),
      },
    ],
  };
  let view = runViewOf(manifest, { runId: "fan-1" });
  view = withNode(view, "fan", running(1_000));
  names.forEach((name, i) => {
    if (i < runningCount) view = withNode(view, `fan/${name}/work`, running(1_000));
  });
  return view;
}
