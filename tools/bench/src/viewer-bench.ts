/**
 * The viewer benchmark (`pnpm bench:viewer`):
 *
 * 1. frame time: one full frame of the run screen (layout, box drawing of the whole graph, the slice
 *    that fits a 120×40 terminal, colour) for 20-, 200- and 1,000-node graphs with branches, loops and
 *    includes; and the same for the graph alone. Goal: 200 nodes <= 10 ms.
 * 2. commit-to-screen latency with a live host: a real `piw-host` (and its workers) runs a chain of
 *    compute nodes while this process follows it as the viewer does (subscribe, render each pushed
 *    view); each sample is the time from the store's commit (the node's saved start or finish time)
 *    to the end of rendering the frame that shows it. Goal: <= 100 ms.
 *
 * Environment: BENCH_FRAMES (frames per size, default 200), BENCH_CHAIN (nodes in the live chain,
 * default 60), BENCH_STEP_MS (how long each live node works, default 25). Run from the repository root;
 * host and worker run from source under tsx, as in the tests. Figures: docs/performance.md ("Viewer").
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { HostConnection } from "@piw/client";
import { loadWorkflowFile } from "@piw/engine";
import type { GraphManifest, JsonValue, NodeView, RunView } from "@piw/protocol";
import { removeTree } from "@piw/test-kit";
import { ansiTheme, initialState, reduceViewer, renderGraph, renderScreen } from "@piw/viewer";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}.`);
  return value;
}

const FRAMES = envInt("BENCH_FRAMES", 200, 10);
const CHAIN = envInt("BENCH_CHAIN", 60, 2);
const STEP_MS = envInt("BENCH_STEP_MS", 25, 0);
const REPO = process.cwd();
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const log = (line: string) => process.stderr.write(`${line}\n`);

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** A graph like real workflows grow: a spine, decisions with a loop back, a jump, includes. */
function benchManifest(size: number): GraphManifest {
  const nodes: GraphManifest["nodes"] = [];
  const mounts: GraphManifest["mounts"] = [];
  const edges: GraphManifest["edges"] = [];
  for (let i = 0; i < size; i += 1) {
    // Every 25th stretch of 5 nodes sits in an include.
    const mount = Math.floor(i / 5) % 5 === 4 ? `inc${Math.floor(i / 25)}` : null;
    const path = mount === null ? `step${i}` : `${mount}/part${i}`;
    if (mount !== null && !mounts.some((m) => m.path === mount)) {
      mounts.push({
        path: mount,
        name: mount,
        scope: "",
        workflow: "child",
        title: mount,
        startPath: path,
        exits: ["ready"],
      });
    }
    const kind =
      i % 10 === 7 ? "decision" : ((["agent", "compute", "shell", "action"] as const)[i % 4] ?? "compute");
    nodes.push({ path, name: path.slice(path.lastIndexOf("/") + 1), scope: mount ?? "", kind, title: path });
  }
  nodes.forEach((node, i) => {
    const next = nodes[i + 1];
    const to =
      next === undefined
        ? { kind: "exit" as const, exit: "done" }
        : { kind: "node" as const, path: next.path };
    if (node.kind === "decision") {
      edges.push({ from: node.path, to, label: "go" });
      edges.push({
        from: node.path,
        to: { kind: "node", path: nodes[Math.max(0, i - 4)]?.path ?? node.path },
        label: "again",
      });
    } else {
      edges.push({ from: node.path, to });
      if (i % 13 === 5 && i + 6 < size)
        edges.push({ from: node.path, to: { kind: "node", path: nodes[i + 6]?.path ?? node.path } });
    }
  });
  return {
    version: 1,
    workflow: `bench${size}`,
    startPath: nodes[0]?.path ?? "step0",
    exits: ["done"],
    maxSteps: 10_000,
    nodes,
    mounts,
    edges,
  };
}

function benchView(size: number): RunView {
  const manifest = benchManifest(size);
  const running = Math.floor(size / 2);
  const nodes: NodeView[] = manifest.nodes.map((node, i) => ({
    path: node.path,
    kind: node.kind,
    title: node.title,
    state: i < running ? "succeeded" : i === running ? "running" : "pending",
    visits: i <= running ? 1 + (i % 3) : 0,
    attempt: i <= running ? 1 : 0,
    startedAt: i <= running ? 1_000 + i : null,
    finishedAt: i < running ? 1_500 + i : null,
    errorCode: null,
  }));
  return {
    runId: `bench-${size}`,
    workflowName: manifest.workflow,
    source: { kind: "builtin", id: "bench", revision: "1" },
    title: null,
    status: "running",
    outcome: null,
    origin: { kind: "cli" },
    parentRunId: null,
    rootRunId: `bench-${size}`,
    originCommand: "start",
    restartNumber: 0,
    paused: false,
    recoveryReason: null,
    error: null,
    revision: size,
    createdAt: 1_000,
    startedAt: 1_000,
    finishedAt: null,
    currentWork: { kind: "worker", launchId: "l", path: nodes[running]?.path ?? null },
    cursor: { path: nodes[running]?.path ?? "step0", visit: 1 },
    nodes,
    manifest,
  };
}

function timeFrames(size: number): { screen: number[]; graph: number[] } {
  const view = benchView(size);
  let state = initialState(view.runId);
  state = reduceViewer(state, { type: "view", view }).state;
  const screen: number[] = [];
  const graph: number[] = [];
  for (let i = 0; i < FRAMES + 5; i += 1) {
    const t0 = performance.now();
    renderScreen(state, { width: 120, height: 40, now: 5_000, theme: ansiTheme });
    const t1 = performance.now();
    renderGraph(view, { width: 120, highlight: view.cursor?.path ?? null, now: 5_000 });
    const t2 = performance.now();
    // The first frames warm up the JIT.
    if (i >= 5) {
      screen.push(t1 - t0);
      graph.push(t2 - t1);
    }
  }
  return { screen, graph };
}

async function liveLatency(): Promise<number[]> {
  const home = mkdtempSync(join(tmpdir(), "piw-viewer-bench-"));
  const lines = [
    `import { compute, defineWorkflow } from "piw";`,
    `const pause = () => new Promise((r) => setTimeout(r, ${STEP_MS}));`,
    "export default defineWorkflow({",
    '  name: "live",',
    '  startAt: "n0",',
    "  nodes: {",
  ];
  for (let i = 0; i < CHAIN; i += 1)
    lines.push(`    n${i}: compute({ run: async () => { await pause(); return ${i}; } }),`);
  lines.push("  },", "  edges: {");
  for (let i = 0; i < CHAIN; i += 1)
    lines.push(`    n${i}: { to: "${i + 1 < CHAIN ? `n${i + 1}` : "done"}" },`);
  lines.push("  },", "});", "");
  const file = join(home, "live.workflow.ts");
  writeFileSync(file, lines.join("\n"));
  process.env.PIW_HOME = home;
  process.env.PIW_WORKER_COMMAND = JSON.stringify([
    process.execPath,
    "--import",
    TSX,
    join(REPO, "apps/worker/src/main.ts"),
  ]);
  process.env.TSX_TSCONFIG_PATH = join(REPO, "tsconfig.json");
  const connection = await HostConnection.open({
    stateDir: home,
    client: "viewer",
    hostCommand: [process.execPath, "--import", TSX, join(REPO, "apps/host/src/main.ts")],
    timeoutMs: 30_000,
  });
  const samples: number[] = [];
  try {
    const loaded = await loadWorkflowFile(file);
    const reply = await connection.call("runs.reserve", {
      workflowName: loaded.name,
      source: loaded.source,
      definitionDigest: loaded.workflow.digest,
      manifest: loaded.workflow.manifest as unknown as JsonValue,
      input: null,
      origin: { kind: "cli" },
      workingDir: home,
    });
    if (reply.kind !== "applied") throw new Error(`reserve: ${JSON.stringify(reply).slice(0, 300)}`);
    const runId = reply.value.runId;
    let state = initialState(runId);
    let lastCommit = 0;
    const finished = new Promise<void>((resolve) => {
      void connection.subscribe(runId, (view) => {
        state = reduceViewer(state, { type: "view", view }).state;
        renderScreen(state, { width: 120, height: 40, now: Date.now(), theme: ansiTheme });
        const drawn = Date.now();
        const commit = Math.max(0, ...view.nodes.flatMap((n) => [n.startedAt ?? 0, n.finishedAt ?? 0]));
        // One sample per new commit the screen shows.
        if (commit > lastCommit) {
          samples.push(drawn - commit);
          lastCommit = commit;
        }
        if (view.status === "done" || view.status === "failed" || view.status === "cancelled") resolve();
      });
    });
    await finished;
    await connection.call("host.stop", {});
  } finally {
    connection.close();
    // The host may still be writing its compile cache as it stops.
    removeTree(home);
  }
  return samples;
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

log(`viewer bench: ${FRAMES} frames per size; live chain of ${CHAIN} nodes, ${STEP_MS} ms each`);
console.log("| graph | frame (run screen 120×40) median | p95 | graph only median | p95 |");
console.log("| ---: | ---: | ---: | ---: | ---: |");
for (const size of [20, 200, 1_000]) {
  const { screen, graph } = timeFrames(size);
  console.log(
    `| ${size} nodes | ${fmt(percentile(screen, 50))} ms | ${fmt(percentile(screen, 95))} ms | ${fmt(percentile(graph, 50))} ms | ${fmt(percentile(graph, 95))} ms |`,
  );
}
const latency = await liveLatency();
console.log("");
console.log("| commit → screen, live host | samples | median | p95 | max |");
console.log("| --- | ---: | ---: | ---: | ---: |");
console.log(
  `| chain of ${CHAIN} compute nodes | ${latency.length} | ${percentile(latency, 50)} ms | ${percentile(latency, 95)} ms | ${Math.max(...latency)} ms |`,
);
