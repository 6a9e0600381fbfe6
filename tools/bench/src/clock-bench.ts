/**
 * The clock benchmark (`pnpm bench:clock`): the host's durable clock with many runs parked in `wait`.
 *
 * 1. Saves BENCH_RUNS (default 10,000) runs parked in a wait node that is due far in the future, with
 *    the embedded runtime against the state directory the host will open.
 * 2. Starts a real `piw-host` (apps/host/dist) on that state, and on an empty one for reference:
 *    start-up time (spawn to the first answered `host.status`) and peak RSS (VmHWM) of each.
 * 3. Adds BENCH_WAKES (default 30) runs whose waits fall due one by one (BENCH_SPACING_MS apart,
 *    default 1500) while the host runs, and measures wake-up lateness from each due time to the
 *    host's claim of the run (the clock itself), to the wait visit reopened by the woken worker, and
 *    to the node after the wait started: median and p99.
 *
 * 4. Schedules on the same clock: host start-up with BENCH_START_SCHEDULES (default 10,000) schedules
 *    saved, and BENCH_SCHEDULES (default 1,000) schedules every minute, all due on the same minute:
 *    firing lateness from each due time to its run saved (the firing's preflight child included),
 *    median and p99, over that minute's firings. Each firing starts a run and so a worker.
 *
 * Figures and their reading live in docs/performance.md ("Durable clock"). Run from the repository
 * root; BENCH_SKIP_BUILD=1 uses apps/host/dist and apps/worker/dist as they are.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { connectHost, type HostClient } from "@piw/client";
import { EmbeddedRuntime } from "@piw/embedded";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import { RunStore } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";
import { buildHostAndWorker } from "./build-apps.js";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}.`);
  return value;
}

const RUNS = envInt("BENCH_RUNS", 10_000, 1);
const WAKES = envInt("BENCH_WAKES", 30, 1);
const SPACING_MS = envInt("BENCH_SPACING_MS", 1500, 1);
const START_SCHEDULES = envInt("BENCH_START_SCHEDULES", 10_000, 0);
const MINUTE_SCHEDULES = envInt("BENCH_SCHEDULES", 1_000, 0);
const REPO = process.cwd();
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-clock-bench-"));
const log = (line: string) => process.stderr.write(`${line}\n`);

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

function hwmMiB(pid: number): number {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(text);
  return hwm ? Number(hwm[1]) / 1024 : Number.NaN;
}

function build(): void {
  if (process.env.BENCH_SKIP_BUILD === "1") return;
  log("building @piw/app-host and @piw/app-worker (nx, cached when unchanged)…");
  buildHostAndWorker(REPO);
}

const WORKFLOW = `import { compute, defineWorkflow, wait } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "parked",
  input: z.object({ at: z.number() }),
  startAt: "hold",
  nodes: {
    hold: wait({ until: ({ input }) => new Date((input as { at: number }).at) }),
    after: compute({ run: () => "woke" }),
  },
  edges: { hold: { to: "after" }, after: { to: "done" } },
});
`;

/** Park `count` runs in the wait, due at `at(i)`, through the embedded runtime (no host running). */
async function park(stateDir: string, loaded: LoadedWorkflow, count: number, at: (i: number) => number) {
  const store = openTunedStore({ stateDir, synchronous: "NORMAL" });
  try {
    const runtime = new EmbeddedRuntime(store);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const { runId, outcome } = await runtime.run({
        workflow: loaded.workflow,
        source: loaded.source,
        input: { at: at(i) },
      });
      if (outcome.kind !== "parked") throw new Error(`run ${runId} did not park: ${JSON.stringify(outcome)}`);
      ids.push(runId);
    }
    return ids;
  } finally {
    store.close();
  }
}

interface Host {
  process: ChildProcess;
  pid: number;
  client: HostClient;
  startMs: number;
}

async function startHostProcess(stateDir: string, name: string): Promise<Host> {
  const logFile = join(root, `${name}.log`);
  const fd = openSync(logFile, "a");
  const env: NodeJS.ProcessEnv = { ...process.env, PIW_HOME: stateDir };
  delete env.PIW_WORKER_COMMAND;
  const began = performance.now();
  const child = spawn(process.execPath, [join(REPO, "apps/host/dist/main.js")], {
    stdio: ["ignore", fd, fd],
    env,
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error("could not start the host");
  for (;;) {
    try {
      const client = await connectHost({ stateDir, client: "test", autoStart: false });
      await client.call("host.status");
      return { process: child, pid: child.pid, client, startMs: performance.now() - began };
    } catch (error) {
      if (child.exitCode !== null || performance.now() - began > 60_000) {
        throw new Error(`the host did not come up: ${String(error)}\n${readFileSync(logFile, "utf8")}`);
      }
      await sleep(10);
    }
  }
}

async function stopHostProcess(host: Host): Promise<void> {
  host.client.close();
  const exited = new Promise<void>((done) => host.process.once("exit", () => done()));
  host.process.kill("SIGTERM");
  await Promise.race([exited, sleep(10_000)]);
  if (host.process.exitCode === null) host.process.kill("SIGKILL");
}

const TICK = `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "tick",
  startAt: "one",
  nodes: { one: compute({ run: () => 1 }) },
  edges: { one: { to: "done" } },
});
`;

/** Save `count` schedules of the tick workflow, every `everyMs`, added at `addedAt`. */
function saveSchedules(
  stateDir: string,
  file: string,
  count: number,
  everyMs: number,
  addedAt: number,
): void {
  const store = openTunedStore({ stateDir, synchronous: "NORMAL", now: () => addedAt });
  try {
    for (let i = 0; i < count; i += 1) {
      const added = store.schedules.add({
        scheduleId: `s-${i}`,
        workflowRef: file,
        workingDir: root,
        timing: { kind: "every", everyMs },
        overlap: "skip",
        catchUp: "none",
        catchUpWindowMs: 0,
        jitterMs: 0,
      });
      if (added.kind !== "applied") throw new Error(`schedule s-${i} was not saved`);
    }
  } finally {
    store.close();
  }
}

/** Host start-up with many schedules, and the lateness of one minute's firings of many schedules. */
async function scheduleRows(flows: string): Promise<string[][]> {
  const file = join(flows, "tick.workflow.ts");
  writeFileSync(file, TICK);
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const rows: string[][] = [];
  if (START_SCHEDULES > 0) {
    const dir = join(root, "schedules-start");
    saveSchedules(dir, file, START_SCHEDULES, 24 * 60 * 60_000, Date.now());
    const host = await startHostProcess(dir, "schedules-start");
    rows.push([`host start-up, ${START_SCHEDULES} schedules`, ms(host.startMs)]);
    // Logged at once: the minute's firings below may run long on a loaded machine.
    log(`host up in ${ms(host.startMs)} with ${START_SCHEDULES} schedules`);
    await stopHostProcess(host);
  }
  if (MINUTE_SCHEDULES > 0) {
    const dir = join(root, "schedules-minute");
    // Added 45 s ago: every schedule's first time is 15 s from now.
    const addedAt = Date.now() - 45_000;
    const due = addedAt + 60_000;
    saveSchedules(dir, file, MINUTE_SCHEDULES, 60_000, addedAt);
    const host = await startHostProcess(dir, "schedules-minute");
    // Every schedule's firing for that minute is saved (a run, or a failure), then the runs are read.
    let failed = 0;
    for (;;) {
      const schedules = await host.client.call("schedules.list", {});
      const fired = schedules.filter((one) => (one.lastFiring?.scheduledFor ?? 0) >= due);
      if (fired.length === MINUTE_SCHEDULES) {
        failed = fired.filter(
          (one) => one.lastFiring?.scheduledFor === due && one.lastFiring.outcome === "failed",
        ).length;
        break;
      }
      // Each firing's preflight takes about a second and four run at once: allow 2 s a firing.
      if (Date.now() > due + Math.max(600_000, MINUTE_SCHEDULES * 2_000)) {
        throw new Error(`only ${fired.length} of the minute's ${MINUTE_SCHEDULES} firings happened`);
      }
      await sleep(250);
    }
    const runs = await host.client.call("runs.list", { limit: 1000 });
    const late = runs
      .filter((run) => run.origin.kind === "schedule" && run.origin.scheduledFor === due)
      .map((run) => run.createdAt - due);
    await stopHostProcess(host);
    rows.push([
      `firing lateness, due → run saved (median / p99, ${MINUTE_SCHEDULES} schedules due on one minute, ${failed} failed)`,
      `${ms(percentile(late, 0.5))} / ${ms(percentile(late, 0.99))}`,
    ]);
  }
  return rows;
}

async function main(): Promise<void> {
  build();
  const flows = join(root, "flows");
  mkdirSync(flows);
  const file = join(flows, "parked.workflow.ts");
  writeFileSync(file, WORKFLOW);
  const loaded = await loadWorkflowFile(file);

  const empty = join(root, "empty");
  const emptyHost = await startHostProcess(empty, "empty");
  const emptyRss = hwmMiB(emptyHost.pid);
  await stopHostProcess(emptyHost);

  const stateDir = join(root, "state");
  const far = Date.now() + 365 * 24 * 60 * 60_000;
  const began = performance.now();
  await park(stateDir, loaded, RUNS, () => far);
  log(`parked ${RUNS} runs in ${((performance.now() - began) / 1000).toFixed(1)} s`);

  // The wake sample: due one by one, starting after the host is up.
  const firstDue = Date.now() + 8_000;
  const dueAt = (i: number) => firstDue + i * SPACING_MS;
  const sample = await park(stateDir, loaded, WAKES, dueAt);
  const host = await startHostProcess(stateDir, "parked");
  const startRss = hwmMiB(host.pid);
  log(`host up in ${host.startMs.toFixed(0)} ms with ${RUNS + WAKES} parked runs`);
  const lastDue = dueAt(WAKES - 1);
  for (;;) {
    const views = await Promise.all(sample.map((runId) => host.client.call("runs.get", { runId })));
    if (views.every((v) => v?.status === "done")) break;
    if (Date.now() > lastDue + 120_000) throw new Error("the sample runs did not all finish");
    await sleep(250);
  }
  const endRss = hwmMiB(host.pid);
  await stopHostProcess(host);

  const store = RunStore.open({ stateDir });
  const toClaim: number[] = [];
  const toReopen: number[] = [];
  const toNext: number[] = [];
  sample.forEach((runId, i) => {
    const events = store.listRunEvents(runId, 0, 1000);
    const claimed = events.findLast((e) => e.type === "run.claimed");
    const reopened = events.find((e) => e.type === "node.retried" && e.path === "hold");
    const next = events.find((e) => e.type === "node.started" && e.path === "after");
    if (!claimed || !reopened || !next) throw new Error(`run ${runId} has no woken visit`);
    toClaim.push(claimed.at - dueAt(i));
    toReopen.push(reopened.at - dueAt(i));
    toNext.push(next.at - dueAt(i));
  });
  const stillParked = store.listRuns({ statuses: ["parked"], limit: 20_000 }).length;
  store.close();

  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const rows = [
    ["runs parked in wait (saved)", String(RUNS + WAKES)],
    ["host start-up, empty state", ms(emptyHost.startMs)],
    [`host start-up, ${RUNS} parked runs`, ms(host.startMs)],
    ["host peak RSS, empty state", `${emptyRss.toFixed(1)} MiB`],
    [`host peak RSS after start, ${RUNS} parked`, `${startRss.toFixed(1)} MiB`],
    ["host peak RSS after the wakes", `${endRss.toFixed(1)} MiB`],
    [
      `wake-up lateness, due → run claimed by the clock (median / p99, ${WAKES} wakes)`,
      `${ms(percentile(toClaim, 0.5))} / ${ms(percentile(toClaim, 0.99))}`,
    ],
    [
      "wake-up lateness, due → wait visit reopened (median / p99)",
      `${ms(percentile(toReopen, 0.5))} / ${ms(percentile(toReopen, 0.99))}`,
    ],
    [
      "wake-up lateness, due → next node started (median / p99)",
      `${ms(percentile(toNext, 0.5))} / ${ms(percentile(toNext, 0.99))}`,
    ],
    ["runs still parked afterwards (the far-future ones)", String(stillParked)],
    ...(await scheduleRows(flows)),
  ];
  process.stdout.write(
    `| measure | value |\n| --- | --- |\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join("\n")}\n`,
  );
}

main()
  .catch((error) => {
    log(String(error instanceof Error ? error.stack : error));
    process.exitCode = 1;
  })
  .finally(() => {
    if (process.env.BENCH_KEEP !== "1") rmSync(root, { recursive: true, force: true });
  });
