import type { GraphManifest, JsonValue } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildRunView } from "../src/build-run-view.js";
import { runningRun, type StoreFile, saved, storeFile } from "./store-file.js";

// A run's view is built many times while the run moves: its manifest is checked once, and a run that
// follows a changed workflow shows the new one at once.

const noWorkers = { acceptedWorker: () => undefined };

let file: StoreFile;
let store: RunStore;
beforeEach(() => {
  file = storeFile("piw-view-manifest-");
  store = file.store;
});
afterEach(() => file.cleanup());

function chainManifest(workflow: string, size: number): GraphManifest {
  const path = (i: number) => `n${i}`;
  return {
    version: 1,
    workflow,
    startPath: path(0),
    exits: ["done"],
    maxSteps: size + 1,
    nodes: Array.from({ length: size }, (_, i) => ({
      path: path(i),
      name: path(i),
      scope: "",
      kind: "compute" as const,
      title: `step ${i}`,
    })),
    mounts: [],
    edges: Array.from({ length: size }, (_, i) => ({
      from: path(i),
      to:
        i + 1 < size ? { kind: "node" as const, path: path(i + 1) } : { kind: "exit" as const, exit: "done" },
    })),
  };
}

/** A manifest as the store saves it: plain JSON. */
function json(manifest: GraphManifest): JsonValue {
  return JSON.parse(JSON.stringify(manifest)) as JsonValue;
}

function viewOf(runId: string) {
  const view = buildRunView(store, runId, noWorkers);
  if (view === null) throw new Error(`no view of ${runId}`);
  return view;
}

describe("the run view's manifest", () => {
  it("is checked once: later views of the run share it", () => {
    runningRun(store, "chain-1", { workflowName: "chain", manifest: json(chainManifest("chain", 3)) });
    const first = viewOf("chain-1");
    const second = viewOf("chain-1");
    expect(second.manifest.nodes.map((n) => n.title)).toEqual(["step 0", "step 1", "step 2"]);
    expect(second.manifest).toBe(first.manifest);
  });

  it("is each run's own, and a redefined run shows its new manifest", () => {
    const fence = runningRun(store, "chain-1", {
      workflowName: "chain",
      manifest: chainManifest("chain", 2),
    });
    runningRun(store, "chain-2", { workflowName: "chain", manifest: json(chainManifest("chain", 4)) });
    expect(viewOf("chain-1").manifest.nodes).toHaveLength(2);
    expect(viewOf("chain-2").manifest.nodes).toHaveLength(4);
    saved(
      store.redefineRun(fence, {
        workflowName: "chain",
        source: { kind: "file", path: "/tmp/chain.workflow.ts", sha256: "b".repeat(64) },
        definitionDigest: "digest-2",
        manifest: json(chainManifest("chain", 3)),
      }),
    );
    expect(viewOf("chain-1").manifest.nodes).toHaveLength(3);
    expect(viewOf("chain-2").manifest.nodes).toHaveLength(4);
  });
});
