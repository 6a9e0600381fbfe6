import { join } from "node:path";
import { loadWorkflowFile } from "@piw/engine";
import type { GraphManifest, RunView } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { renderFooterStatus, renderGraph, renderSnapshot, renderWidgetLines } from "../src/index.js";
import { parseGraph } from "./graph-verifier.js";
import { runViewOf, withNode } from "./run-view-fixture.js";

// Golden snapshots of the examples, from their compiled manifests. The engine compiles them here,
// in test code only; the viewer itself never imports it.

const EXAMPLES = join(import.meta.dirname, "../../../examples");

async function manifestOf(name: string): Promise<GraphManifest> {
  const loaded = await loadWorkflowFile(join(EXAMPLES, `${name}.workflow.ts`));
  return loaded.workflow.manifest as GraphManifest;
}

const done = (at: number, took: number) => ({
  state: "succeeded" as const,
  visits: 1,
  attempt: 1,
  startedAt: at,
  finishedAt: at + took,
});

/** Each example stopped at an interesting point of a run. */
const SCENES: Record<string, (manifest: GraphManifest) => RunView> = {
  hello: (m) =>
    withNode(withNode(runViewOf(m), "greet", done(1_000, 12)), "echo", {
      state: "running",
      visits: 1,
      attempt: 1,
      startedAt: 1_020,
    }),
  compose: (m) =>
    withNode(withNode(runViewOf(m), "code/prepare", done(1_000, 340)), "docs/prepare", {
      state: "running",
      visits: 1,
      attempt: 2,
      startedAt: 1_400,
    }),
  "review-loop": (m) => {
    let view = runViewOf(m, { currentWork: { kind: "waiting_for_model", path: "draft" } });
    view = withNode(view, "draft", { state: "running", visits: 2, attempt: 1, startedAt: 9_000 });
    view = withNode(view, "review", done(5_000, 2_500));
    return withNode(view, "route", done(7_600, 3));
  },
  approval: (m) => {
    const view = runViewOf(m, {
      status: "done",
      outcome: "waiting",
      finishedAt: 2_000,
      cursor: { path: "approve", visit: 1 },
    });
    return withNode(withNode(view, "plan", done(1_000, 8)), "approve", done(1_010, 2));
  },
  // A real test failure took its route: the failed visit shows failed, and the run goes on in `fix`.
  "flaky-tests": (m) => {
    let view = runViewOf(m, { currentWork: { kind: "worker", launchId: "launch-1", path: "fix" } });
    view = withNode(view, "prepare", done(1_000, 90));
    view = withNode(view, "test", {
      state: "failed",
      visits: 1,
      attempt: 1,
      startedAt: 1_100,
      finishedAt: 2_900,
      errorCode: "node_failed",
    });
    return withNode(view, "fix", { state: "running", visits: 1, attempt: 1, startedAt: 2_900 });
  },
  workspace: (m) =>
    withNode(
      runViewOf(m, {
        status: "parked",
        recoveryReason: {
          code: "worker_lost_no_progress",
          message: "the worker exited before saving progress",
          launchId: "launch-1",
        },
      }),
      "prepare",
      {
        state: "failed",
        visits: 1,
        attempt: 1,
        startedAt: 1_000,
        finishedAt: 1_900,
        errorCode: "worker_lost",
      },
    ),
};

describe("examples", () => {
  for (const [name, scene] of Object.entries(SCENES)) {
    it(`${name}: graph, snapshot, widget and footer`, async () => {
      const view = scene(await manifestOf(name));
      const graph = renderGraph(view, { width: 80 });
      // The golden file must also be a correct drawing of the manifest.
      const parsed = parseGraph(graph.lines);
      expect(parsed.problems).toEqual([]);
      expect(parsed.edges).toHaveLength(view.manifest.edges.length);
      const text = [
        "# piw view --once",
        ...renderSnapshot(view, { width: 80, now: 20_000 }),
        "",
        "# widget (width 60)",
        ...renderWidgetLines(view, { width: 60, now: 20_000 }),
        "",
        "# footer",
        renderFooterStatus(view),
        "",
      ].join("\n");
      await expect(text).toMatchFileSnapshot(`__snapshots__/examples/${name}.txt`);
    });
  }
});
