import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { connectHost, type HostClient } from "@piw/client";
import { EmbeddedRuntime } from "@piw/embedded";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import { startTunedHost } from "@piw/host/testing";
import { RunStore } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";
import { buildHostAndWorker } from "./build-apps.js";
import {
  checkCompleted,
  envInt,
  fmt,
  type Host,
  median,
  type Mode,
  procCpu,
  type ReserveParams,
  reserveParams as reserveParamsIn,
  runIdOf,
  startHostProcess as startBenchHost,
  stopHostProcess,
  writeChainFile,
} from "./host-bench-kit.js";
// The bench-only baseline of (2), as in store-bench.ts: the one deliberate exception to the
// `sqlite-only-in-store` boundary rule, which `pnpm boundaries` checks over packages/ and apps/ only.
import Database from "better-sqlite3";
// Only to count the store's transactions in the counting pass (each `tx` is one commit).
import { StoreContext } from "../../../packages/store/src/context.ts";

const NODES = envInt("BENCH_NODES", 1000, 1);
const ROUNDS = envInt("BENCH_ROUNDS", 5, 1);
const RESERVES = envInt("BENCH_RESERVES", 500, 1);
const ACTIVATIONS = envInt("BENCH_ACTIVATIONS", 10, 1);
const COMMITS = envInt("BENCH_COMMITS", 2000, 1);
const SKIP_BUILD = process.env.BENCH_SKIP_BUILD === "1";
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;

const MODES: Mode[] = ["FULL", "NORMAL"];

const REPO = process.cwd();
/** Where the measured host and worker are built: this checkout, or a copy of its builds (BENCH_BUILT). */
const BUILT = process.env.BENCH_BUILT ? resolve(process.env.BENCH_BUILT) : REPO;
const WORKER_MAIN = join(BUILT, "apps/worker/dist/main.js");

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-runtime-bench-"));

const log = (line: string) => process.stderr.write(`${line}\n`);

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

// ---------------------------------------------------------------------------------------------------
// /proc readers: peak RSS (VmHWM) and CPU time (own, and of reaped children).

function procStatus(pid: number): { hwmKiB: number; zombie: boolean } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(text);
  return { hwmKiB: hwm ? Number(hwm[1]) : 0, zombie: /^State:\s+Z/m.test(text) };
}

// ---------------------------------------------------------------------------------------------------
// Workflows: generated `*.workflow.ts` files, compiled with the engine's loader (as `piw run` does).

const reserveParams = (loaded: LoadedWorkflow, origin: ReserveParams["origin"]) =>
  reserveParamsIn(loaded, origin, root);

// ---------------------------------------------------------------------------------------------------
// Hosts: `apps/host/dist/main.js` processes, one per synchronous mode, each with its own state dir.

const startHostProcess = (mode: Mode, checkout = BUILT, label: string = mode) =>
  startBenchHost({ root, checkout, mode, label });

/** The pid of the worker the host launched for `runId` (polls `host.status` until it shows). */
async function workerPid(client: HostClient, runId: string): Promise<number> {
  for (let i = 0; i < 2000; i++) {
    const status = await client.call("host.status");
    const worker = status.workers.find((w) => w.runId === runId);
    if (worker?.pid) return worker.pid;
    await sleep(2);
  }
  throw new Error(`no worker appeared for run ${runId}`);
}

/** CPU samples of a host and its worker, with the wall-clock time they were taken at. */
interface CpuSample {
  at: number;
  hostMs: number;
  workerMs: number;
}

interface Watched {
  /** Peak RSS of the worker, sampled. */
  hwmKiB: number;
  samples: CpuSample[];
}

/**
 * Watch a worker until the host has reaped it: its peak RSS, and CPU samples of it and of the host
 * every `everyMs`. The worker's last few ms of CPU are not sampled; the host's children time has them.
 */
async function watchWorker(pid: number, everyMs: number, hostPid: number): Promise<Watched> {
  let hwmKiB = 0;
  const samples: CpuSample[] = [];
  for (;;) {
    const status = procStatus(pid);
    if (status === null) return { hwmKiB, samples };
    if (!status.zombie) {
      hwmKiB = Math.max(hwmKiB, status.hwmKiB);
      try {
        samples.push({ at: Date.now(), hostMs: procCpu(hostPid).selfMs, workerMs: procCpu(pid).selfMs });
      } catch {
        // The worker exited between the two reads.
      }
    }
    await sleep(status.zombie ? 1 : everyMs);
  }
}

/** A CPU counter at wall-clock time `at`, interpolated between the samples around it. */
function cpuAt(samples: CpuSample[], at: number, f: (s: CpuSample) => number): number {
  const after = samples.findIndex((s) => s.at >= at);
  if (after <= 0) return f(samples[after < 0 ? samples.length - 1 : 0] as CpuSample);
  const a = samples[after - 1] as CpuSample;
  const b = samples[after] as CpuSample;
  return b.at === a.at ? f(b) : f(a) + ((f(b) - f(a)) * (at - a.at)) / (b.at - a.at);
}

// ---------------------------------------------------------------------------------------------------
// (1) The chain through host + worker.

interface ChainSample {
  /** Reserve sent → run finished (the host's `finishedAt`). */
  e2eMs: number;
  /** First node started → last node finished (the host's timestamps). */
  nodePhaseMs: number;
  /** Reserve sent → run marked running by its worker (process start, module loading, hello). */
  acceptedMs: number;
  /** Reserve sent → first node started (the above, plus loading and compiling the workflow file). */
  startupMs: number;
  /** Whole run: the host's own CPU, and the worker's (from the host's reaped-children time). */
  hostCpuMs: number;
  workerCpuMs: number;
  /** The same in the node phase only (interpolated from samples every 50 ms). */
  hostNodeCpuMs: number;
  workerNodeCpuMs: number;
  workerHwmKiB: number;
  /** Views a follower received, and whether the host dropped it for falling behind. */
  pushes: number;
  disconnected: boolean;
  /** Size of the final view as JSON: what one push of this run carries. */
  viewBytes: number;
}

async function chainRun(host: Host, params: ReserveParams, followed: boolean): Promise<ChainSample> {
  const { client } = host;
  // A follower has its own connection, as `piw run` has: the host may drop a follower that falls behind.
  const follower = followed
    ? await connectHost({ stateDir: host.stateDir, client: "test", autoStart: false })
    : null;
  let pushes = 0;
  let disconnected = false;
  let reached: () => void = () => {};
  const terminal = new Promise<void>((done) => {
    reached = done;
  });
  follower?.on("disconnect", () => {
    disconnected = true;
    reached();
  });
  const cpu0 = procCpu(host.pid);
  const sentAt = Date.now();
  const runId = runIdOf(await client.call("runs.reserve", params));
  await follower?.subscribe(runId, (view) => {
    pushes += 1;
    if (view.status === "done" || view.status === "failed" || view.status === "cancelled") reached();
  });
  const pid = await workerPid(client, runId);
  const watched = await watchWorker(pid, 50, host.pid);
  if (follower) await Promise.race([terminal, sleep(30_000)]);
  follower?.close();
  const cpu1 = procCpu(host.pid);
  const view = checkCompleted(await client.call("runs.get", { runId }), NODES, `chain at ${host.mode}`);
  const first = view.nodes.find((n) => n.path === "n0");
  const last = view.nodes.find((n) => n.path === `n${NODES - 1}`);
  if (!first?.startedAt || !last?.finishedAt || !view.finishedAt || !view.startedAt) {
    throw new Error("chain: timestamps missing");
  }
  const between = (f: (s: CpuSample) => number) =>
    cpuAt(watched.samples, last.finishedAt as number, f) -
    cpuAt(watched.samples, first.startedAt as number, f);
  return {
    e2eMs: view.finishedAt - sentAt,
    nodePhaseMs: last.finishedAt - first.startedAt,
    acceptedMs: view.startedAt - sentAt,
    startupMs: first.startedAt - sentAt,
    hostCpuMs: cpu1.selfMs - cpu0.selfMs,
    workerCpuMs: cpu1.childrenMs - cpu0.childrenMs,
    hostNodeCpuMs: between((s) => s.hostMs),
    workerNodeCpuMs: between((s) => s.workerMs),
    workerHwmKiB: watched.hwmKiB,
    pushes,
    disconnected,
    viewBytes: Buffer.byteLength(JSON.stringify(view)),
  };
}

// ---------------------------------------------------------------------------------------------------
// (2) Commits per node, counted in a separate pass: an in-process host (same code, from source) with
// the store's transaction runner wrapped, and the built worker. Each `tx` is one commit.

async function countCommits(
  chain: ReserveParams,
): Promise<{ perNode: number; byMethod: Record<string, number> }> {
  const counts: Record<string, number> = {};
  const stack: string[] = [];
  let open: { label: string | null } | null = null;
  const proto = RunStore.prototype as unknown as Record<string, unknown>;
  const restore: Array<() => void> = [];
  for (const name of Object.getOwnPropertyNames(proto)) {
    const original = proto[name];
    if (name === "constructor" || typeof original !== "function") continue;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      stack.push(name);
      if (open && open.label === null && name !== "commitGroup") open.label = name;
      try {
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } finally {
        stack.pop();
      }
    };
    restore.push(() => {
      proto[name] = original;
    });
  }
  const ctxProto = StoreContext.prototype;
  const tx = ctxProto.tx;
  const group = ctxProto.group;
  // Only an outermost transaction commits (one inside a group is a savepoint). A commit counts for
  // the method that opened it, or for the first one a group of one ran (worker writes are groups).
  ctxProto.tx = function <T>(this: StoreContext, fn: () => T): T {
    if (this.db.inTransaction) return tx.call(this, fn) as T;
    open = { label: stack.find((name) => name !== "commitGroup") ?? null };
    try {
      return tx.call(this, fn) as T;
    } finally {
      const method = open.label ?? stack[0] ?? "(outside RunStore)";
      counts[method] = (counts[method] ?? 0) + 1;
      open = null;
    }
  };
  // A group of several requests is one commit of its own (a group of one is a plain `tx`).
  ctxProto.group = function <T>(this: StoreContext, requests: ReadonlyArray<() => T>) {
    if (requests.length > 1) counts["commitGroup (several)"] = (counts["commitGroup (several)"] ?? 0) + 1;
    return group.call(this, requests) as ReturnType<typeof group<T>>;
  };
  restore.push(() => {
    ctxProto.tx = tx;
    ctxProto.group = group;
  });
  const host = await startTunedHost(
    { stateDir: join(root, "count"), workerCommand: [process.execPath, WORKER_MAIN] },
    { synchronous: "NORMAL" },
  );
  try {
    const client = await connectHost({ stateDir: host.stateDir, client: "test", autoStart: false });
    try {
      for (const key of Object.keys(counts)) delete counts[key];
      const runId = runIdOf(await client.call("runs.reserve", chain));
      await watchWorker(await workerPid(client, runId), 50, process.pid);
      checkCompleted(await client.call("runs.get", { runId }), NODES, "counting pass");
    } finally {
      client.close();
    }
  } finally {
    await host.stop();
    for (const undo of restore) undo();
  }
  // A node boundary is one advanceNodeVisit, or a finishNodeVisit and a startNodeVisit; the worker
  // pipelines pure steps, so a group of several advances is one commit (counted once, as a group).
  const perNode =
    ((counts.startNodeVisit ?? 0) +
      (counts.finishNodeVisit ?? 0) +
      (counts.advanceNodeVisit ?? 0) +
      (counts["commitGroup (several)"] ?? 0)) /
    NODES;
  return { perNode, byMethod: { ...counts } };
}

interface CommitSample {
  rate: number;
  p50Ms: number;
  p99Ms: number;
}

/** A WAL database at FULL taking 1-row INSERT transactions (as store-bench (c)); returns each latency. */
function openCommitter(): { commit(n: number): number[]; close(): void } {
  const dir = mkdtempSync(join(root, "commit-"));
  const db = new Database(join(dir, "commit.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  const tx = db.transaction((i: number) => insert.run(`row ${i}`));
  let i = 0;
  return {
    commit(n) {
      const latencies: number[] = [];
      for (let k = 0; k < n; k++) {
        const t = performance.now();
        tx.immediate(i++);
        latencies.push(performance.now() - t);
      }
      return latencies;
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The disk's raw commit rate at FULL: COMMITS transactions after a short warm-up. */
function commitRate(): CommitSample {
  const committer = openCommitter();
  try {
    committer.commit(Math.min(200, COMMITS));
    const t0 = performance.now();
    const latencies = committer.commit(COMMITS);
    return {
      rate: (COMMITS * 1000) / (performance.now() - t0),
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
    };
  } finally {
    committer.close();
  }
}

/**
 * The same chain with the engine and the store in the bench's own process (EmbeddedRuntime, as
 * engine-bench (b)/(c)): what the chain costs without the process boundary. Timed from accepting
 * the command to the saved end.
 */
async function embeddedRun(mode: Mode, chain: LoadedWorkflow): Promise<number> {
  const dir = mkdtempSync(join(root, "embedded-"));
  const store = openTunedStore({ stateDir: dir, synchronous: mode });
  try {
    const runtime = new EmbeddedRuntime(store, 3_600_000);
    const runId = runtime.reserve({
      workflow: chain.workflow,
      source: chain.source,
      input: null,
      workingDir: root,
    });
    const activation = runtime.activate(runId);
    const t0 = performance.now();
    const outcome = await runtime.execute(activation, chain.workflow);
    const ms = performance.now() - t0;
    const steps = store.listRunSteps(runId);
    if (
      outcome.kind !== "completed" ||
      steps.length !== NODES ||
      steps.some((x) => x.status !== "succeeded")
    ) {
      throw new Error(`embedded ${mode}: ${outcome.kind}, ${steps.length} steps`);
    }
    return ms;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// (3) LangGraph JS: a StateGraph of NODES nodes in a chain, each incrementing a counter, checkpointed
// by SqliteSaver to a temp file.

type LangGraphConfig = "shipped" | "full-sync";
const LANGGRAPH_LABEL: Record<LangGraphConfig, string> = {
  shipped: "as shipped (WAL, synchronous left at better-sqlite3's default, durability async)",
  "full-sync": 'synchronous=FULL, durability "sync"',
};

interface LangGraphSample {
  ms: number;
  commitsPerStep: number;
  journal: string;
  synchronous: string;
}

const SYNCHRONOUS_NAMES = ["OFF", "NORMAL", "FULL", "EXTRA"];

/** The builder's methods used here; node names are generated, so the typed builder API cannot follow. */
interface ChainBuilder {
  addNode(name: string, fn: (state: { count: number }) => { count: number }): ChainBuilder;
  addEdge(from: string, to: string): ChainBuilder;
  compile(options: { checkpointer: SqliteSaver }): {
    invoke(
      input: { count: number },
      config: { configurable: { thread_id: string }; recursionLimit: number; durability: "async" | "sync" },
    ): Promise<{ count: number }>;
  };
}

let langGraphRuns = 0;

async function langGraphRun(config: LangGraphConfig): Promise<LangGraphSample> {
  const State = Annotation.Root({ count: Annotation<number>() });
  const builder = new StateGraph(State) as unknown as ChainBuilder;
  for (let i = 0; i < NODES; i++) builder.addNode(`n${i}`, (s) => ({ count: s.count + 1 }));
  builder.addEdge(START, "n0");
  for (let i = 0; i + 1 < NODES; i++) builder.addEdge(`n${i}`, `n${i + 1}`);
  builder.addEdge(`n${NODES - 1}`, END);
  const file = join(root, `langgraph-${++langGraphRuns}.db`);
  const saver = SqliteSaver.fromConnString(file);
  if (config === "full-sync") saver.db.pragma("synchronous = FULL");
  let commits = 0;
  const put = saver.put.bind(saver);
  const putWrites = saver.putWrites.bind(saver);
  // One autocommit INSERT per put, one transaction per putWrites: one commit each.
  saver.put = (...args) => {
    commits += 1;
    return put(...args);
  };
  saver.putWrites = (...args) => {
    commits += 1;
    return putWrites(...args);
  };
  const graph = builder.compile({ checkpointer: saver });
  const t0 = performance.now();
  const out = await graph.invoke(
    { count: 0 },
    {
      configurable: { thread_id: `bench-${langGraphRuns}` },
      recursionLimit: NODES + 10,
      durability: config === "full-sync" ? "sync" : "async",
    },
  );
  const ms = performance.now() - t0;
  if (out.count !== NODES) throw new Error(`LangGraph: expected count ${NODES}, got ${out.count}`);
  const journal = String(saver.db.pragma("journal_mode", { simple: true }));
  const synchronous = SYNCHRONOUS_NAMES[Number(saver.db.pragma("synchronous", { simple: true }))] ?? "?";
  saver.db.close();
  rmSync(file, { force: true });
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  return { ms, commitsPerStep: commits / NODES, journal, synchronous };
}

// ---------------------------------------------------------------------------------------------------
// (4) reserve → reply, and (5) activation → first node running.

async function reserveLatencies(
  host: Host,
  tiny: LoadedWorkflow,
  count: number,
  tag: string,
): Promise<string[]> {
  const ids: string[] = [];
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    // A Pi origin with a fresh session: the run stays queued (it would activate on `session.settled`).
    const params = reserveParams(tiny, { kind: "pi", sessionId: `bench-${tag}-${i}` });
    const t0 = performance.now();
    const reply = await host.client.call("runs.reserve", params);
    latencies.push(performance.now() - t0);
    ids.push(runIdOf(reply));
  }
  reserveSamples.get(host.mode)?.push(...latencies);
  return ids;
}
const reserveSamples = new Map<Mode, number[]>(MODES.map((m) => [m, []]));

interface ActivationSample {
  /** Reserve sent → reply. */
  replyMs: number;
  /** Reserve reply → first pushed view showing the worker accepted (it said hello). */
  replyToWorkerMs: number;
  /** Reserve reply → first pushed view with a node running or succeeded. */
  replyToNodeMs: number;
  workerHwmKiB: number;
}

async function activationRun(
  host: Host,
  watcher: HostClient,
  tiny: LoadedWorkflow,
): Promise<ActivationSample> {
  const firstWorker = new Map<string, number>();
  const firstNode = new Map<string, number>();
  const done = new Map<string, () => void>();
  const unsubscribe = await watcher.subscribe(undefined, (view) => {
    const now = performance.now();
    if (!firstWorker.has(view.runId) && (view.currentWork.kind === "worker" || view.status === "running")) {
      firstWorker.set(view.runId, now);
    }
    if (
      !firstNode.has(view.runId) &&
      view.nodes.some((n) => n.state === "running" || n.state === "succeeded")
    ) {
      firstNode.set(view.runId, now);
      // A fast run's views are coalesced: the first one seen may already show a node (or the end), and
      // the worker accepted no later than that.
      if (!firstWorker.has(view.runId)) firstWorker.set(view.runId, now);
    }
    if (view.status === "done" || view.status === "failed" || view.status === "cancelled")
      done.get(view.runId)?.();
  });
  try {
    const t0 = performance.now();
    const reply = await host.client.call("runs.reserve", reserveParams(tiny, { kind: "cli" }));
    const t1 = performance.now();
    const runId = runIdOf(reply);
    const finished = new Promise<void>((resolveDone) => done.set(runId, resolveDone));
    const watched = await watchWorker(await workerPid(host.client, runId), 20, host.pid);
    await Promise.race([finished, sleep(10_000)]);
    checkCompleted(
      await host.client.call("runs.get", { runId }),
      tiny.workflow.manifest.nodes.length,
      "activation",
    );
    const node = firstNode.get(runId);
    const worker = firstWorker.get(runId);
    if (node === undefined || worker === undefined) throw new Error(`activation: views missing for ${runId}`);
    return {
      replyMs: t1 - t0,
      replyToWorkerMs: worker - t1,
      replyToNodeMs: node - t1,
      workerHwmKiB: watched.hwmKiB,
    };
  } finally {
    await unsubscribe();
  }
}

// ---------------------------------------------------------------------------------------------------

function build(): void {
  if (SKIP_BUILD) {
    log("BENCH_SKIP_BUILD=1: using apps/host/dist and apps/worker/dist as they are");
    return;
  }
  log("building @piw/app-host and @piw/app-worker (nx, cached when unchanged)…");
  buildHostAndWorker(REPO);
}

const mib = (kib: number) => fmt(kib / 1024, 0);

interface Results {
  counted: { perNode: number; byMethod: Record<string, number> };
  /** Keyed by side; one sample per round, in round order. */
  chain: Map<string, ChainSample[]>;
  embedded: Map<Mode, number[]>;
  langGraph: Map<LangGraphConfig, LangGraphSample[]>;
  commits: CommitSample[];
  activations: Map<Mode, ActivationSample[]>;
  /** BENCH_BASELINE's activations (its host at FULL). */
  baselineActivations: ActivationSample[];
  /** Host VmHWM after its chains with no follower (before any followed run), and at the end. */
  hostHwmQuiet: Map<Mode, number>;
  hostHwmEnd: Map<Mode, number>;
  compileMs: number;
  viewBytes: number;
  /** Raw 1-row commit latencies at FULL, taken between the reserve blocks. */
  reserveCommitMs: number[];
}

async function main(): Promise<void> {
  build();
  const cpu = cpus();
  console.log(
    `runtime bench: chain of ${NODES} compute nodes, ${ROUNDS} rounds (+1 warm-up), node ${process.version}, ` +
      `${cpu.length} × ${cpu[0]?.model ?? "cpu"}, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}, temp dir ${root}`,
  );
  const wfDir = join(root, "workflows");
  mkdirSync(wfDir);
  const c0 = performance.now();
  const chain = await loadWorkflowFile(writeChainFile(wfDir, "chain", NODES));
  const compileMs = performance.now() - c0;
  const tiny = await loadWorkflowFile(writeChainFile(wfDir, "tiny", 2));
  const chainParams = reserveParams(chain, { kind: "cli" });

  log("counting the store's commits per node (in-process host at NORMAL, built worker)…");
  const counted = await countCommits(chainParams);
  log(`  commits by store method: ${JSON.stringify(counted.byMethod)}`);

  const r: Results = {
    counted,
    chain: new Map(),
    embedded: new Map(MODES.map((m) => [m, []])),
    langGraph: new Map([
      ["shipped", []],
      ["full-sync", []],
    ]),
    commits: [],
    activations: new Map(MODES.map((m) => [m, []])),
    baselineActivations: [],
    hostHwmQuiet: new Map(),
    hostHwmEnd: new Map(),
    compileMs,
    viewBytes: 0,
    reserveCommitMs: [],
  };
  const hosts = new Map<Mode, Host>();
  let baseline: Host | undefined;
  try {
    for (const mode of MODES) hosts.set(mode, await startHostProcess(mode));
    const hostOf = (mode: Mode) => hosts.get(mode) as Host;
    baseline = BASELINE ? await startHostProcess("FULL", BASELINE, "FULL baseline") : undefined;
    if (baseline) log(`baseline: ${BASELINE} at FULL, as one more side`);

    // (1) + (2) + (3), interleaved: every round runs each side once, in a rotating order.
    type Side = { run(): Promise<void> };
    let recording = false;
    const followedRan = new Set<Mode>();
    const sides: Side[] = [];
    for (const mode of MODES) {
      for (const followed of [false, true]) {
        const key = `${mode} ${followed ? "followed" : "quiet"}`;
        sides.push({
          run: async () => {
            const host = hostOf(mode);
            const s = await chainRun(host, chainParams, followed);
            // The host's peak before any follower made it build and queue views.
            if (followed) followedRan.add(mode);
            else if (!followedRan.has(mode))
              r.hostHwmQuiet.set(mode, procStatus(host.pid)?.hwmKiB ?? Number.NaN);
            r.viewBytes = Math.max(r.viewBytes, s.viewBytes);
            if (recording) r.chain.set(key, [...(r.chain.get(key) ?? []), s]);
            log(
              `  piw ${key.padEnd(15)} ${fmt((NODES * 1000) / s.e2eMs)} nodes/s end to end, ` +
                `${fmt((NODES * 1000) / s.nodePhaseMs)} in the node phase, start-up ${fmt(s.startupMs)} ms` +
                (followed
                  ? `, ${s.pushes} views received${s.disconnected ? ", then dropped by the host" : ""}`
                  : ""),
            );
          },
        });
      }
      sides.push({
        run: async () => {
          const ms = await embeddedRun(mode, chain);
          if (recording) r.embedded.get(mode)?.push(ms);
          log(`  embedded ${mode.padEnd(10)} ${fmt((NODES * 1000) / ms)} nodes/s (one process)`);
        },
      });
    }
    if (baseline) {
      const key = "baseline FULL quiet";
      const base = baseline;
      sides.push({
        run: async () => {
          const s = await chainRun(base, chainParams, false);
          if (recording) r.chain.set(key, [...(r.chain.get(key) ?? []), s]);
          log(
            `  ${key.padEnd(19)} ${fmt((NODES * 1000) / s.e2eMs)} nodes/s end to end, ` +
              `${fmt((NODES * 1000) / s.nodePhaseMs)} in the node phase, start-up ${fmt(s.startupMs)} ms`,
          );
        },
      });
    }
    for (const config of ["shipped", "full-sync"] as LangGraphConfig[]) {
      sides.push({
        run: async () => {
          const s = await langGraphRun(config);
          if (recording) r.langGraph.get(config)?.push(s);
          log(
            `  langgraph ${config.padEnd(9)} ${fmt((NODES * 1000) / s.ms)} steps/s (${s.journal}, ${s.synchronous})`,
          );
        },
      });
    }
    sides.push({
      run: async () => {
        const c = commitRate();
        if (recording) r.commits.push(c);
        log(
          `  raw commit at FULL ${fmt(c.rate)} commits/s, p50 ${fmt(c.p50Ms, 2)} ms, p99 ${fmt(c.p99Ms, 2)} ms`,
        );
      },
    });
    for (let round = -1; round < ROUNDS; round++) {
      recording = round >= 0;
      log(round < 0 ? "warm-up round" : `round ${round + 1}`);
      const offset = Math.max(round, 0);
      for (let i = 0; i < sides.length; i++) await (sides[(offset + i) % sides.length] as Side).run();
    }

    // (5) activation → first node running, interleaving the two hosts.
    log(`activation: ${ACTIVATIONS} tiny CLI runs per mode`);
    const watchers = new Map<Mode, HostClient>();
    for (const mode of MODES) {
      watchers.set(
        mode,
        await connectHost({ stateDir: hostOf(mode).stateDir, client: "test", autoStart: false }),
      );
    }
    const baselineWatcher = baseline
      ? await connectHost({ stateDir: baseline.stateDir, client: "test", autoStart: false })
      : undefined;
    for (let i = 0; i < ACTIVATIONS; i++) {
      for (const mode of i % 2 ? [...MODES].reverse() : MODES) {
        const s = await activationRun(hostOf(mode), watchers.get(mode) as HostClient, tiny);
        r.activations.get(mode)?.push(s);
      }
      if (baseline && baselineWatcher) {
        r.baselineActivations.push(await activationRun(baseline, baselineWatcher, tiny));
      }
    }
    for (const w of watchers.values()) w.close();
    baselineWatcher?.close();

    // (4) reserve → reply: warm-up, then blocks of 50 alternating between the hosts; then cancel all.
    log(`reserve latency: ${RESERVES} Pi-origin reserves per mode`);
    const queued = new Map<Mode, string[]>(MODES.map((m) => [m, []]));
    for (const mode of MODES) {
      queued.get(mode)?.push(...(await reserveLatencies(hostOf(mode), tiny, 50, "warm")));
    }
    for (const list of reserveSamples.values()) list.length = 0;
    // The disk's own commit latency in the same minutes, for comparison: 50 raw commits per block.
    const committer = openCommitter();
    try {
      for (let done = 0, block = 0; done < RESERVES; done += 50, block++) {
        const n = Math.min(50, RESERVES - done);
        for (const mode of block % 2 ? [...MODES].reverse() : MODES) {
          queued.get(mode)?.push(...(await reserveLatencies(hostOf(mode), tiny, n, `b${block}`)));
        }
        r.reserveCommitMs.push(...committer.commit(50));
      }
    } finally {
      committer.close();
    }
    for (const mode of MODES) {
      for (const runId of queued.get(mode) ?? []) {
        const t = (await hostOf(mode).client.call("runs.cancel", { runId })) as { kind: string };
        if (t.kind !== "applied") throw new Error(`cancel ${runId}: ${t.kind}`);
      }
    }

    // (6) peak RSS of the hosts over everything above.
    for (const mode of MODES) r.hostHwmEnd.set(mode, procStatus(hostOf(mode).pid)?.hwmKiB ?? Number.NaN);
    report(r);
    if (baseline) reportBaseline(r);
  } finally {
    for (const host of hosts.values()) await stopHostProcess(host);
    if (baseline) await stopHostProcess(baseline);
  }
}

/** The median over rounds of a per-round ratio (sides of one round ran close together). */
function perRound<A, B>(as: A[], bs: B[], f: (a: A, b: B) => number): { median: number; rounds: number[] } {
  const rounds = as.slice(0, bs.length).map((a, i) => f(a, bs[i] as B));
  return { median: median(rounds), rounds };
}

function report(r: Results): void {
  const chain = (mode: Mode, followed = false) =>
    r.chain.get(`${mode} ${followed ? "followed" : "quiet"}`) ?? [];
  const perSec = (ms: number) => (NODES * 1000) / ms;
  const med = (mode: Mode, f: (s: ChainSample) => number, followed = false) =>
    median(chain(mode, followed).map(f));
  const rangeOf = (rates: number[]) => `${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))}`;
  const lg = (config: LangGraphConfig) => r.langGraph.get(config) ?? [];
  const reserve = (mode: Mode) => reserveSamples.get(mode) ?? [];
  const act = (mode: Mode) => r.activations.get(mode) ?? [];
  const list = (values: number[], digits = 0) => values.map((v) => fmt(v, digits)).join(", ");

  console.log(`\nMedians of ${ROUNDS} rounds (one run = a chain of ${NODES} compute nodes):\n`);
  console.log("| what | FULL | NORMAL |");
  console.log("| --- | ---: | ---: |");
  const row = (what: string, f: (mode: Mode) => string) =>
    console.log(`| ${what} | ${f("FULL")} | ${f("NORMAL")} |`);
  row("(1) host + worker, nodes/s, reserve sent → run finished", (m) => fmt(perSec(med(m, (s) => s.e2eMs))));
  row("(1) same, range over the rounds", (m) => rangeOf(chain(m).map((s) => perSec(s.e2eMs))));
  row("(1) host + worker, nodes/s, first node started → last node finished", (m) =>
    fmt(perSec(med(m, (s) => s.nodePhaseMs))),
  );
  row("(1) start-up: reserve sent → run accepted by its worker, ms", (m) => fmt(med(m, (s) => s.acceptedMs)));
  row("(1) start-up: reserve sent → first node started, ms", (m) => fmt(med(m, (s) => s.startupMs)));
  row("(1) node phase: host CPU per node, µs", (m) => fmt((med(m, (s) => s.hostNodeCpuMs) * 1000) / NODES));
  row("(1) node phase: worker CPU per node, µs", (m) =>
    fmt((med(m, (s) => s.workerNodeCpuMs) * 1000) / NODES),
  );
  row("(1) whole run: host CPU, ms", (m) => fmt(med(m, (s) => s.hostCpuMs)));
  row("(1) whole run: worker CPU, ms", (m) => fmt(med(m, (s) => s.workerCpuMs)));
  row("(1) reference: embedded (engine + store in one process), nodes/s", (m) =>
    fmt(perSec(median(r.embedded.get(m) ?? []))),
  );
  row("(1) followed by a subscriber (as `piw run`), nodes/s end to end", (m) =>
    fmt(perSec(med(m, (s) => s.e2eMs, true))),
  );
  row("(1) followed: node phase, nodes/s", (m) => fmt(perSec(med(m, (s) => s.nodePhaseMs, true))));
  row("(1) followed: views received per run", (m) => fmt(med(m, (s) => s.pushes, true)));
  row(
    "(1) followed: runs whose follower the host dropped",
    (m) => `${chain(m, true).filter((s) => s.disconnected).length} of ${chain(m, true).length}`,
  );
  row("(4) reserve → reply, p50 ms", (m) => fmt(percentile(reserve(m), 0.5), 2));
  row("(4) reserve → reply, p99 ms", (m) => fmt(percentile(reserve(m), 0.99), 2));
  row("(4) raw 1-row commit at FULL between the reserve blocks, p50 / p99 ms", (m) =>
    m === "FULL"
      ? `${fmt(percentile(r.reserveCommitMs, 0.5), 2)} / ${fmt(percentile(r.reserveCommitMs, 0.99), 2)}`
      : "—",
  );
  row("(5) reserve reply → worker accepted (pushed view), median ms", (m) =>
    fmt(median(act(m).map((s) => s.replyToWorkerMs))),
  );
  row("(5) reserve reply → first node running (pushed view), median ms", (m) =>
    fmt(median(act(m).map((s) => s.replyToNodeMs))),
  );
  row("(6) host peak RSS before any followed run (chains with no follower), MiB", (m) =>
    mib(r.hostHwmQuiet.get(m) ?? Number.NaN),
  );
  row("(6) host peak RSS over the whole bench, MiB", (m) => mib(r.hostHwmEnd.get(m) ?? Number.NaN));

  const commit = median(r.commits.map((c) => c.rate));
  const limit = commit / r.counted.perNode;
  const fullE2e = chain("FULL").map((s) => perSec(s.e2eMs));
  const fullPhase = chain("FULL").map((s) => perSec(s.nodePhaseMs));
  const pctE2e = perRound(fullE2e, r.commits, (rate, c) => (100 * rate * r.counted.perNode) / c.rate);
  const pctPhase = perRound(fullPhase, r.commits, (rate, c) => (100 * rate * r.counted.perNode) / c.rate);
  const lgFull = lg("full-sync").map((s) => perSec(s.ms));
  const lgShipped = lg("shipped").map((s) => perSec(s.ms));
  const ratioFull = perRound(fullE2e, lgFull, (a, b) => a / b);
  const ratioShipped = perRound(fullE2e, lgShipped, (a, b) => a / b);
  const workerHwm = Math.max(...[...r.chain.values()].flat().map((s) => s.workerHwmKiB));
  const tinyWorkerHwm = Math.max(...MODES.flatMap((m) => act(m).map((s) => s.workerHwmKiB)));

  console.log(
    "\nCommit bound at FULL, LangGraph, memory (medians; per-round values where a ratio is taken):\n",
  );
  console.log("| what | value | per round |");
  console.log("| --- | ---: | --- |");
  const line = (what: string, value: string, rounds = "") =>
    console.log(`| ${what} | ${value} | ${rounds} |`);
  line(
    "(2) raw commit rate: 1-row INSERT txn, WAL, FULL, commits/s",
    fmt(commit),
    list(r.commits.map((c) => c.rate)),
  );
  line(
    "(2) raw commit latency p50 / p99, ms",
    `${fmt(median(r.commits.map((c) => c.p50Ms)), 2)} / ${fmt(median(r.commits.map((c) => c.p99Ms)), 2)}`,
  );
  line(
    "(2) store commits per node (counted: startNodeVisit + finishNodeVisit + advanceNodeVisit + groups)",
    fmt(r.counted.perNode, 2),
  );
  line("(2) commit-bound limit = commit rate / commits per node, nodes/s", fmt(limit));
  line("(2) chain at FULL as % of the limit, end to end", `${fmt(pctE2e.median)} %`, list(pctE2e.rounds));
  line("(2) chain at FULL as % of the limit, node phase", `${fmt(pctPhase.median)} %`, list(pctPhase.rounds));
  for (const config of ["shipped", "full-sync"] as LangGraphConfig[]) {
    const s = lg(config)[0];
    line(
      `(3) LangGraph ${LANGGRAPH_LABEL[config]} → journal_mode=${s?.journal}, synchronous=${s?.synchronous}: steps/s`,
      fmt(perSec(median(lg(config).map((x) => x.ms)))),
      list(lg(config).map((x) => perSec(x.ms))),
    );
  }
  line(
    "(3) LangGraph commits per step (put + putWrites)",
    fmt(median(lg("full-sync").map((s) => s.commitsPerStep)), 2),
  );
  line(
    "(3) ratio: piw at FULL (end to end) / LangGraph at FULL",
    `${fmt(ratioFull.median, 2)}×`,
    list(ratioFull.rounds, 2),
  );
  line(
    "(3) ratio: piw at FULL (end to end) / LangGraph as shipped",
    `${fmt(ratioShipped.median, 2)}×`,
    list(ratioShipped.rounds, 2),
  );
  line(
    "(5) reserve sent → reply, CLI run, ms (median)",
    fmt(median(MODES.flatMap((m) => act(m).map((s) => s.replyMs))), 2),
  );
  line(`(6) worker peak RSS, ${NODES}-node chain, MiB`, mib(workerHwm));
  line("(6) worker peak RSS, 2-node workflow, MiB", mib(tinyWorkerHwm));
  line(`one pushed view of the ${NODES}-node run, KiB`, fmt(r.viewBytes / 1024));

  console.log("\nGoals:\n");
  console.log("| goal | result | |");
  console.log("| --- | --- | --- |");
  const goal = (ok: boolean) => (ok ? "met" : "**missed**");
  console.log(
    `| chain at FULL >= 80 % of the commit-bound limit | ${fmt(pctE2e.median)} % (node phase ${fmt(pctPhase.median)} %) | ${goal(pctE2e.median >= 80)} |`,
  );
  console.log(
    `| >= 5× LangGraph (both at FULL) | ${fmt(ratioFull.median, 2)}× | ${goal(ratioFull.median >= 5)} |`,
  );
  const p99 = percentile(reserve("FULL"), 0.99);
  console.log(`| reserve → reply p99 <= 5 ms (FULL) | ${fmt(p99, 2)} ms | ${goal(p99 <= 5)} |`);
  const activation = median(act("FULL").map((s) => s.replyToNodeMs));
  console.log(
    `| activation → first node running <= 250 ms (FULL) | ${fmt(activation)} ms | ${goal(activation <= 250)} |`,
  );

  console.log(
    `\nCommits counted per store method in one ${NODES}-node run: ${JSON.stringify(r.counted.byMethod)}`,
  );
  console.log(
    `Loading and compiling the ${NODES}-node workflow file once in the bench process: ${fmt(r.compileMs)} ms ` +
      "(each worker does it again).",
  );
  console.log(
    `Load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}.`,
  );
}

/** This checkout against BENCH_BASELINE, both at FULL, from the same rounds. */
function reportBaseline(r: Results): void {
  const perSec = (ms: number) => (NODES * 1000) / ms;
  const sides = [r.chain.get("baseline FULL quiet") ?? [], r.chain.get("FULL quiet") ?? []];
  const acts = [r.baselineActivations, r.activations.get("FULL") ?? []];
  const lgFull = (r.langGraph.get("full-sync") ?? []).map((s) => perSec(s.ms));
  console.log(`\nBaseline ${BASELINE} against this checkout, both at FULL (medians of the same rounds):\n`);
  console.log("| what | baseline | this checkout |");
  console.log("| --- | ---: | ---: |");
  const row = (what: string, f: (samples: ChainSample[], i: number) => string) =>
    console.log(`| ${what} | ${f(sides[0] ?? [], 0)} | ${f(sides[1] ?? [], 1)} |`);
  const med = (samples: ChainSample[], f: (s: ChainSample) => number) => median(samples.map(f));
  row("(1) nodes/s, reserve sent → run finished", (s) => fmt(perSec(med(s, (x) => x.e2eMs))));
  row("(1) nodes/s, node phase", (s) => fmt(perSec(med(s, (x) => x.nodePhaseMs))));
  row("(1) reserve sent → run accepted by its worker, ms", (s) => fmt(med(s, (x) => x.acceptedMs)));
  row("(1) reserve sent → first node started, ms", (s) => fmt(med(s, (x) => x.startupMs)));
  row("(1) node phase: host CPU per node, µs", (s) => fmt((med(s, (x) => x.hostNodeCpuMs) * 1000) / NODES));
  row("(1) node phase: worker CPU per node, µs", (s) =>
    fmt((med(s, (x) => x.workerNodeCpuMs) * 1000) / NODES),
  );
  row("(3) ratio to LangGraph at FULL, per-round median", (s) => {
    const ratio = perRound(
      s.map((x) => perSec(x.e2eMs)),
      lgFull,
      (a, b) => a / b,
    );
    return `${fmt(ratio.median, 2)}×`;
  });
  row("(5) reserve reply → worker accepted, median ms", (_s, i) =>
    fmt(median((acts[i] ?? []).map((x) => x.replyToWorkerMs))),
  );
  row("(5) reserve reply → first node running, median ms", (_s, i) =>
    fmt(median((acts[i] ?? []).map((x) => x.replyToNodeMs))),
  );
}

try {
  await main();
} finally {
  rmSync(resolve(root), { recursive: true, force: true });
}
