/**
 * The group-commit benchmark (`pnpm bench:commit`): 1, 2, 4, 8 and 16 concurrent chains of compute
 * nodes (default 1,000 each) through real `piw-host` and `piw-worker` processes built from this
 * checkout, at synchronous=FULL, on two hosts side by side in the same rounds: one with group commit
 * (the default) and one with `PIW_GROUP_COMMIT=off` (every request commits alone, as before group
 * commit). It reports durable nodes/s per side and concurrency, and the ratios.
 *
 * One sample = reserve N CLI runs of the chain at once (each activates at once and gets its own
 * worker), then wait until all are done. Every run is checked: done, completed, every node
 * succeeded. "End to end" is from the first reserve sent to the last run's `finishedAt` (worker
 * start-up included: only one idle worker waits, the others are spawned on demand); "node phase" is
 * from the earliest first-node start to the latest last-node finish, the window in which all the
 * chains' commits compete. Figures and their reading live in docs/performance.md ("Group commit").
 *
 * The host serves only the bench, so a sample ends when it has no queued, starting or running run.
 *
 * Environment: BENCH_NODES (default 1000), BENCH_ROUNDS (default 3), BENCH_CONCURRENCY (default
 * "1,2,4,8,16"), BENCH_SKIP_BUILD=1 (use the dist as it is), BENCH_DIR (parent of the temp dir).
 * Each round runs every concurrency on both hosts, in alternating order, after one untimed warm-up.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadWorkflowFile } from "@piw/engine";
import { buildHostAndWorker } from "./build-apps.js";
import {
  checkCompleted,
  envInt,
  fmt,
  type Host,
  median,
  procCpu,
  type ReserveParams,
  reserveParams,
  runIdOf,
  startHostProcess,
  stopHostProcess,
  writeChainFile,
} from "./host-bench-kit.js";

const NODES = envInt("BENCH_NODES", 1000, 1);
const ROUNDS = envInt("BENCH_ROUNDS", 3, 1);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "1,2,4,8,16").split(",").map((text) => {
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new Error("BENCH_CONCURRENCY: integers 1..64, comma-separated.");
  return n;
});
const REPO = process.cwd();
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-commit-bench-"));
const log = (line: string) => process.stderr.write(`${line}\n`);

type Side = "group" | "single";
const SIDES: Side[] = ["group", "single"];
const SIDE_LABEL: Record<Side, string> = {
  group: "group commit",
  single: "one commit per request (PIW_GROUP_COMMIT=off)",
};

interface Sample {
  /** First reserve sent → last run finished (the host's `finishedAt`). */
  e2eMs: number;
  /** Earliest first-node start → latest last-node finish. */
  nodePhaseMs: number;
  /** The host's own CPU over the sample. */
  hostCpuMs: number;
  /** The CPU of the sample's workers (start-up included), once the host has reaped them all. */
  workersCpuMs: number;
}

/** N runs of the chain at once on `host`, until all are done. */
async function concurrentRuns(host: Host, params: ReserveParams, n: number): Promise<Sample> {
  const { client } = host;
  const cpu0 = procCpu(host.pid);
  const sentAt = Date.now();
  const runIds = await Promise.all(
    Array.from({ length: n }, async () => runIdOf(await client.call("runs.reserve", params))),
  );
  const deadline = Date.now() + 600_000;
  // `host.status` counts runs by status with one query: polling it costs the host next to nothing,
  // where listing the runs would build their summaries (each reads its manifest) every time.
  for (;;) {
    const { runs } = await client.call("host.status");
    if (runs.queued + runs.starting + runs.running === 0) break;
    if (Date.now() > deadline) throw new Error(`${host.label}: ${n} runs did not finish in 10 minutes`);
    await sleep(50);
  }
  const hostCpuMs = procCpu(host.pid).selfMs - cpu0.selfMs;
  // A worker's CPU reaches the host's children CPU when the host reaps it, after its run is done.
  for (;;) {
    const { workers } = await client.call("host.status");
    if (!workers.some((worker) => runIds.includes(worker.runId))) break;
    if (Date.now() > deadline) throw new Error(`${host.label}: the workers of ${n} runs did not exit`);
    await sleep(20);
  }
  const workersCpuMs = procCpu(host.pid).childrenMs - cpu0.childrenMs;
  let firstStart = Number.POSITIVE_INFINITY;
  let lastFinish = 0;
  let finishedAt = 0;
  for (const runId of runIds) {
    const view = checkCompleted(await client.call("runs.get", { runId }), NODES, `${host.label} x${n}`);
    const first = view.nodes.find((node) => node.path === "n0");
    const last = view.nodes.find((node) => node.path === `n${NODES - 1}`);
    if (!first?.startedAt || !last?.finishedAt || !view.finishedAt) throw new Error("timestamps missing");
    firstStart = Math.min(firstStart, first.startedAt);
    lastFinish = Math.max(lastFinish, last.finishedAt);
    finishedAt = Math.max(finishedAt, view.finishedAt);
  }
  return { e2eMs: finishedAt - sentAt, nodePhaseMs: lastFinish - firstStart, hostCpuMs, workersCpuMs };
}

async function main(): Promise<void> {
  if (process.env.BENCH_SKIP_BUILD === "1") log("BENCH_SKIP_BUILD=1: using the built apps as they are");
  else {
    log("building @piw/app-host and @piw/app-worker (nx, cached when unchanged)…");
    buildHostAndWorker(REPO);
  }
  const cpu = cpus();
  const loadAtStart = loadavg();
  console.log(
    `commit bench: ${CONCURRENCY.join(", ")} concurrent chains of ${NODES} compute nodes at FULL, ${ROUNDS} rounds ` +
      `(+1 warm-up), node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "cpu"}, load average ` +
      `${loadAtStart.map((l) => l.toFixed(1)).join(" ")}`,
  );
  const wfDir = join(root, "workflows");
  mkdirSync(wfDir);
  const chain = await loadWorkflowFile(writeChainFile(wfDir, "chain", NODES));
  const params = reserveParams(chain, { kind: "cli" }, root);
  const hosts = new Map<Side, Host>();
  const results = new Map<string, Sample[]>();
  try {
    // Every chain of the widest round gets its worker at once: the bench measures commits, not the cap.
    const cap = { PIW_MAX_WORKERS: String(Math.max(4, ...CONCURRENCY)) };
    hosts.set(
      "group",
      await startHostProcess({ root, checkout: REPO, mode: "FULL", label: "group", env: cap }),
    );
    hosts.set(
      "single",
      await startHostProcess({
        root,
        checkout: REPO,
        mode: "FULL",
        label: "single",
        env: { ...cap, PIW_GROUP_COMMIT: "off" },
      }),
    );
    const hostOf = (side: Side) => hosts.get(side) as Host;
    log("warm-up: 4 concurrent runs per host");
    for (const side of SIDES) await concurrentRuns(hostOf(side), params, 4);
    for (let round = 0; round < ROUNDS; round++) {
      log(`round ${round + 1}`);
      for (const n of CONCURRENCY) {
        const order = (round + n) % 2 ? [...SIDES].reverse() : SIDES;
        for (const side of order) {
          const sample = await concurrentRuns(hostOf(side), params, n);
          const key = `${side} ${n}`;
          results.set(key, [...(results.get(key) ?? []), sample]);
          log(
            `  ${side.padEnd(6)} x${String(n).padEnd(2)} ${fmt((n * NODES * 1000) / sample.e2eMs)} nodes/s end to end, ` +
              `${fmt((n * NODES * 1000) / sample.nodePhaseMs)} in the node phase, host CPU ${fmt((sample.hostCpuMs * 1000) / (n * NODES))} µs/node, workers ${fmt((sample.workersCpuMs * 1000) / (n * NODES))}`,
          );
        }
      }
    }
  } finally {
    for (const host of hosts.values()) await stopHostProcess(host);
  }
  report(results, loadAtStart);
}

function report(results: Map<string, Sample[]>, loadAtStart: number[]): void {
  const samples = (side: Side, n: number) => results.get(`${side} ${n}`) ?? [];
  const rate = (n: number, ms: number) => (n * NODES * 1000) / ms;
  const e2e = (side: Side, n: number) => samples(side, n).map((s) => rate(n, s.e2eMs));
  const phase = (side: Side, n: number) => samples(side, n).map((s) => rate(n, s.nodePhaseMs));
  const cpuPerNode = (side: Side, n: number) =>
    samples(side, n).map((s) => (s.hostCpuMs * 1000) / (n * NODES));
  /** Per round: side A's rate over side B's, both taken in the same round. */
  const ratio = (a: number[], b: number[]) => median(a.map((x, i) => x / (b[i] ?? Number.NaN)));

  console.log(`\nMedians of ${ROUNDS} rounds, durable nodes/s (all runs' nodes over the time they took):\n`);
  console.log(
    "| runs | group commit, end to end | off, end to end | ratio | group commit, node phase | off, node phase | ratio | host CPU µs/node, group / off |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const n of CONCURRENCY) {
    console.log(
      `| ${n} | ${fmt(median(e2e("group", n)))} | ${fmt(median(e2e("single", n)))} | ${fmt(ratio(e2e("group", n), e2e("single", n)), 2)}× ` +
        `| ${fmt(median(phase("group", n)))} | ${fmt(median(phase("single", n)))} | ${fmt(ratio(phase("group", n), phase("single", n)), 2)}× ` +
        `| ${fmt(median(cpuPerNode("group", n)))} / ${fmt(median(cpuPerNode("single", n)))} |`,
    );
  }
  // Every process of a run competes for the same cores: all runs' nodes can go no faster than the
  // cores divided by the CPU one node costs across the host and the workers.
  const cores = cpus().length;
  const totalCpu = (n: number) =>
    samples("group", n).map((s) => ((s.hostCpuMs + s.workersCpuMs) * 1000) / (n * NODES));
  const ceiling = (n: number) => (cores * 1e6) / median(totalCpu(n));
  console.log(
    `\nCPU per durable node with group commit (host + workers, worker start-up included) and the rate ` +
      `${cores} cores allow at that cost:\n`,
  );
  console.log(
    "| runs | host µs | workers µs | total µs | CPU-bound ceiling, nodes/s | end to end | of the ceiling |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const n of CONCURRENCY) {
    const workers = samples("group", n).map((s) => (s.workersCpuMs * 1000) / (n * NODES));
    console.log(
      `| ${n} | ${fmt(median(cpuPerNode("group", n)))} | ${fmt(median(workers))} | ${fmt(median(totalCpu(n)))} ` +
        `| ${fmt(ceiling(n))} | ${fmt(median(e2e("group", n)))} | ${fmt((100 * median(e2e("group", n))) / ceiling(n))} % |`,
    );
  }
  if (CONCURRENCY.includes(1) && CONCURRENCY.includes(8)) {
    const scale = (rates: (side: Side, n: number) => number[], side: Side) =>
      ratio(rates(side, 8), rates(side, 1));
    console.log("\nGoals:\n");
    console.log("| goal | result | |");
    console.log("| --- | --- | --- |");
    const goal = (ok: boolean) => (ok ? "met" : "**missed**");
    const groupScale = scale(e2e, "group");
    console.log(
      `| 8 runs ≥ 3× the single-run durable nodes/s (group commit, end to end) | ${fmt(groupScale, 2)}× ` +
        `(node phase ${fmt(scale(phase, "group"), 2)}×; with group commit off ${fmt(scale(e2e, "single"), 2)}×) | ${goal(groupScale >= 3)} |`,
    );
    console.log(
      `| (the most 8 runs could reach at their CPU per node on ${cores} cores) | ${fmt(ceiling(8) / median(e2e("group", 1)), 2)}× the single run | |`,
    );
    const single = ratio(e2e("group", 1), e2e("single", 1));
    console.log(
      `| single run not slower than with group commit off | ${fmt(median(e2e("group", 1)))} against ${fmt(median(e2e("single", 1)))} nodes/s (${fmt(single, 2)}×) | ${goal(single >= 0.97)} |`,
    );
  }
  console.log(`\nSides: ${SIDES.map((side) => `${side} = ${SIDE_LABEL[side]}`).join("; ")}.`);
  console.log(
    `Load average at the start: ${loadAtStart.map((l) => l.toFixed(1)).join(" ")}; at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}.`,
  );
}

try {
  await main();
} finally {
  rmSync(resolve(root), { recursive: true, force: true });
}
