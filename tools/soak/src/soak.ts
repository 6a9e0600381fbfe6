/**
 * The random-kill soak (`pnpm soak`): a real host process and its real workers run many workflows
 * (actions, shell commands that fail their first attempt and are retried after a durable pause,
 * compute nodes and waits on the host's clock) at once while a seeded schedule kills them with SIGKILL — the host (then started again), run
 * workers and the idle warm worker. After the storm the kills stop and every run is settled: a run
 * must be `done/completed`, or `parked` with a recovery reason and then finish after exactly one
 * `runs.resume`. Every managed effect appends a line to a ledger before it does its work, so the
 * soak can tell whether an effect the store had already settled was ever executed again.
 *
 * Beside that chain run a parallel workflow (joins "all" and "any" of branches of those kinds) and a
 * map workflow (the same joins over items' branches), and a share of the schedule's events cancels
 * one of their runs mid-flight (`workflows.ts`).
 *
 * Invariants (`invariants.ts`), checked for each run as soon as it ends, and for all of them at the end:
 * - no run ends `failed`, nor `cancelled` unless the soak cancelled it (the workflows never fail);
 * - each run ends once: one end event in its trace, and an ended run never changes state again;
 * - a completed run has every node succeeded (a join's loser aside), each visited once;
 * - cancel wins: a cancelled run ends cancelled, and no effect of it is reserved after the cancel;
 * - every effect of a completed run is settled; no execution of any effect started after it settled;
 * - after the storm, every run is done, or parked with a reason and completes after one resume.
 *
 * Settings (env): SOAK_SEED (1), SOAK_SECONDS (180), SOAK_CONCURRENCY (4), SOAK_NODES (12),
 * SOAK_WORKFLOWS (chain,parallel,map), SOAK_CANCEL_PERCENT (5),
 * SOAK_KILL_MIN_MS (250), SOAK_KILL_MAX_MS (1500), SOAK_SKIP_BUILD=1 to use the apps already built,
 * SOAK_DIR for the scratch folder (a temp dir by default, removed unless SOAK_KEEP=1).
 * It is a script, not a test: it prints its figures and exits 1 if any invariant failed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallParams, newRequestKey } from "@piw/client";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import { isClockReason, type JsonValue, type RunSummary } from "@piw/protocol";
import { SoakHost } from "./host.js";
import {
  checkCancelled,
  checkCompleted,
  type Expected,
  type LedgerLine,
  type RunCheck,
  readLedger,
} from "./invariants.js";
import {
  MAP_RACE_LOSERS,
  mapRunPaths,
  RACE_LOSERS,
  writeChainWorkflow,
  writeMapWorkflow,
  writeParallelWorkflow,
} from "./workflows.js";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

const SEED = envInt("SOAK_SEED", 1, 0);
const SECONDS = envInt("SOAK_SECONDS", 180, 1);
const CONCURRENCY = envInt("SOAK_CONCURRENCY", 4, 1);
const NODES = envInt("SOAK_NODES", 12, 3);
const KILL_MIN_MS = envInt("SOAK_KILL_MIN_MS", 250, 10);
const KILL_MAX_MS = envInt("SOAK_KILL_MAX_MS", 1500, KILL_MIN_MS);
const WORKFLOWS = (process.env.SOAK_WORKFLOWS ?? "chain,parallel,map").split(",").filter(Boolean);
if (WORKFLOWS.length === 0 || WORKFLOWS.some((w) => !["chain", "parallel", "map"].includes(w))) {
  throw new Error("SOAK_WORKFLOWS must list some of chain, parallel and map, comma-separated");
}
/** The share of the schedule's events that cancel a run of the parallel or map workflow mid-flight. */
const CANCEL_SHARE =
  WORKFLOWS.includes("parallel") || WORKFLOWS.includes("map") ? envInt("SOAK_CANCEL_PERCENT", 5, 0) / 100 : 0;
const REPO = process.cwd();
const HOST_MAIN = join(REPO, "apps/host/dist/main.js");

const root = mkdtempSync(join(process.env.SOAK_DIR ?? tmpdir(), "piw-soak-"));
const stateDir = join(root, "state");
const ledger = join(root, "effects.ledger");
const hostLog = join(root, "host.log");
const log = (line: string) => process.stderr.write(`${line}\n`);

/** mulberry32: a small seeded generator, so a failing schedule can be run again. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(SEED);
const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

const soakHost = new SoakHost(HOST_MAIN, stateDir, hostLog);
const startHost = () => soakHost.start();
const killHost = () => soakHost.kill();
const call = soakHost.call.bind(soakHost) as SoakHost["call"];

// ---------------------------------------------------------------------------------------------------
// Runs and their invariants.

/** A workflow the soak starts runs of, and what its completed runs must show. */
interface SoakWorkflow {
  loaded: LoadedWorkflow;
  expected: Expected;
}

interface SoakRun {
  runId: string;
  tag: string;
  workflow: SoakWorkflow;
  resumes: number;
  /** Set when the soak cancelled the run: the time the cancel's reply came back, or null if it was lost. */
  cancel?: { repliedAt: number | null };
  /** The status and outcome it first ended with: an ended run never changes again. */
  ended?: string;
  /** Its end was looked at (completed and checked, or a violation recorded). */
  checked: boolean;
  completed: boolean;
}

const runs = new Map<string, SoakRun>();
const violations: string[] = [];
const figures = {
  hostKills: 0,
  workerKills: 0,
  branchKills: 0,
  idleWorkerKills: 0,
  runsStarted: 0,
  parkedDuringStorm: 0,
  resumesDuringStorm: 0,
  parkedAfterStorm: 0,
  effectExecutions: 0,
  settledEffectsReExecuted: 0,
  cancelsApplied: 0,
  cancelsLost: 0,
  cancelsInFlight: 0,
  parallelCompleted: 0,
  mapCompleted: 0,
  runsCancelled: 0,
  reserveResends: 0,
  reservesAdopted: 0,
  notDoneOrResumable: 0,
};
const parkReasons = new Map<string, number>();
const countReason = (code: string) => parkReasons.set(code, (parkReasons.get(code) ?? 0) + 1);

function reserveParams(loaded: LoadedWorkflow, tag: string): CallParams<"runs.reserve"> {
  return {
    workflowName: loaded.name,
    source: loaded.source,
    definitionDigest: loaded.workflow.digest,
    manifest: loaded.workflow.manifest as unknown as JsonValue,
    input: { tag, ledger },
    origin: { kind: "cli" },
    workingDir: root,
  };
}

async function startRun(workflow: SoakWorkflow, index: number): Promise<void> {
  const { loaded } = workflow;
  const tag = `soak-${SEED}-${index}`;
  // One key for every send of this start: a reserve whose reply died with the host is sent again
  // with it, and the host answers with the run it had already saved instead of making a second one.
  const requestKey = newRequestKey();
  for (;;) {
    const reply = await call("runs.reserve", { ...reserveParams(loaded, tag), requestKey });
    if (reply !== undefined && reply.kind !== "conflict" && reply.kind !== "recoveryRequired") {
      if (reply.kind === "adopted") figures.reservesAdopted += 1;
      runs.set(reply.value.runId, {
        runId: reply.value.runId,
        tag,
        workflow,
        resumes: 0,
        checked: false,
        completed: false,
      });
      figures.runsStarted += 1;
      return;
    }
    if (reply !== undefined)
      throw new Error(`runs.reserve was refused: ${JSON.stringify(reply).slice(0, 300)}`);
    figures.reserveResends += 1;
    if (figures.reserveResends > 1000) throw new Error("runs.reserve kept losing its reply: is the host up?");
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------------
// The storm.

async function killSomething(): Promise<void> {
  const choice = random();
  if (choice < 0.2 || !soakHost.up) {
    await killHost();
    figures.hostKills += 1;
    await sleep(between(0, 400));
    await startHost();
    return;
  }
  const status = await call("host.status");
  if (status === undefined) return;
  const busy = status.workers.filter((w) => w.pid !== null);
  const idle = status.idleWorkerPid ?? null;
  if (choice < 0.35 && idle !== null) {
    if (signal(idle)) figures.idleWorkerKills += 1;
    return;
  }
  if (choice < 0.35 + CANCEL_SHARE) {
    await cancelOne();
    return;
  }
  // Half the time, the victim is the worker of a parallel or map run with a branch's visit open, if any:
  // the kill lands mid-flight.
  const flying: typeof busy = [];
  for (const worker of busy) if (await branchesInFlight(worker.runId)) flying.push(worker);
  const pool = flying.length > 0 && random() < 0.5 ? flying : busy;
  const victim = pool[Math.floor(random() * pool.length)];
  if (victim === undefined || !signal(victim.pid as number)) return;
  figures.workerKills += 1;
  if (flying.includes(victim)) figures.branchKills += 1;
}

/** Whether runs of this workflow fork: the parallel and the map workflow. */
function forks(workflow: SoakWorkflow | undefined): boolean {
  return workflow !== undefined && (workflow === parallelWorkflow || workflow === mapWorkflow);
}

/** A run of the parallel or map workflow with a branch's visit open right now. */
async function branchesInFlight(runId: string): Promise<boolean> {
  if (!forks(runs.get(runId)?.workflow)) return false;
  const view = await call("runs.get", { runId });
  return (view?.nodes ?? []).some((n) => n.path.includes("/") && n.state === "running");
}

/** Cancels a random unfinished run of the parallel or map workflow, mid-flight, as a user would. */
async function cancelOne(): Promise<void> {
  const list = (await call("runs.list", { limit: 1000 })) ?? [];
  const candidates = list.filter((s) => {
    const run = runs.get(s.runId);
    return run !== undefined && run.cancel === undefined && forks(run.workflow) && !TERMINAL.has(s.status);
  });
  const target = candidates[Math.floor(random() * candidates.length)];
  const run = target && runs.get(target.runId);
  if (run === undefined) return;
  const flying = await branchesInFlight(run.runId);
  const reply = await call("runs.cancel", { runId: run.runId });
  // A reply lost with a killed host leaves the cancel unknown: the run may end either way.
  run.cancel = { repliedAt: reply === undefined ? null : Date.now() };
  if (reply === undefined) figures.cancelsLost += 1;
  else if (reply.kind === "applied") {
    figures.cancelsApplied += 1;
    if (flying) figures.cancelsInFlight += 1;
  } else run.cancel = undefined;
}

function signal(pid: number): boolean {
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

const TERMINAL = new Set(["done", "failed", "cancelled"]);

/** A run parked on a wait or retry pause, not paused: the host's clock wakes it, nobody resumes it. */
function onClock(summary: RunSummary): boolean {
  return summary.status === "parked" && !summary.paused && isClockReason(summary.recoveryReason);
}

function ledgerOf(run: SoakRun): LedgerLine[] {
  return readLedger(ledger).lines.filter((line) => line.tag === run.tag);
}

function record(run: SoakRun, end: string, check: RunCheck): void {
  run.checked = true;
  run.ended = end;
  figures.effectExecutions += check.executions;
  figures.settledEffectsReExecuted += check.reExecuted;
  if (check.problems.length > 0) violations.push(`${run.runId}: ${check.problems.join("; ")}`);
}

/** Look at every run once: check completed ones, note failures, resume parked ones if asked. */
async function sweep(resumeParked: boolean): Promise<RunSummary[]> {
  const list = await call("runs.list", { limit: 1000 });
  if (list === undefined) return [];
  for (const summary of list) {
    const run = runs.get(summary.runId);
    if (run === undefined) continue;
    const end = `${summary.status}/${summary.outcome}`;
    if (run.ended !== undefined && run.ended !== end)
      violations.push(`${run.runId} ended ${run.ended}, then was ${end}`);
    if (run.checked) continue;
    if (summary.status === "done" && summary.outcome === "completed") {
      const view = await call("runs.get", { runId: run.runId });
      const history = await call("runs.history", { runId: run.runId });
      if (view && history) {
        if (run.cancel?.repliedAt !== undefined && run.cancel.repliedAt !== null) {
          violations.push(`${run.runId} completed after its cancel was applied`);
        }
        record(run, end, checkCompleted(run.workflow.expected, view, history, ledgerOf(run)));
        run.completed = true;
        if (run.workflow === parallelWorkflow) figures.parallelCompleted += 1;
        if (run.workflow === mapWorkflow) figures.mapCompleted += 1;
      }
    } else if (summary.status === "cancelled" && run.cancel !== undefined) {
      const history = await call("runs.history", { runId: run.runId });
      if (history) {
        record(run, end, checkCancelled(history, ledgerOf(run), run.cancel.repliedAt));
        figures.runsCancelled += 1;
      }
    } else if (TERMINAL.has(summary.status)) {
      run.checked = true;
      run.ended = end;
      violations.push(
        `${run.runId} ended ${summary.status}/${summary.outcome}: ${summary.error?.code ?? "no error"}`,
      );
    } else if (onClock(summary)) {
      // Left to the clock: its wake-ups are under the kills too.
    } else if (summary.status === "parked" && resumeParked) {
      if (summary.recoveryReason === null) violations.push(`${run.runId} parked with no reason`);
      else countReason(summary.recoveryReason.code);
      const reply = await call("runs.resume", { runId: run.runId });
      if (reply?.kind === "applied") {
        run.resumes += 1;
        figures.resumesDuringStorm += 1;
        figures.parkedDuringStorm += 1;
      }
    }
  }
  return list;
}

let parallelWorkflow: SoakWorkflow | undefined;
let mapWorkflow: SoakWorkflow | undefined;

/**
 * Loads a written workflow; its completed runs must show every node of its manifest (`concrete`
 * turns a map's template paths into its items' paths).
 */
async function soakWorkflow(
  file: string,
  losers: ReadonlySet<string>,
  concrete: (paths: string[]) => string[] = (paths) => paths,
): Promise<SoakWorkflow> {
  const loaded = await loadWorkflowFile(file);
  const nodes = loaded.workflow.manifest.nodes;
  const paths = concrete(nodes.map((n) => n.path));
  const actions = concrete(nodes.filter((n) => n.kind === "action").map((n) => n.path)).length;
  return { loaded, expected: { paths, actions, losers } };
}

function build(): void {
  if (process.env.SOAK_SKIP_BUILD === "1") return;
  log("soak: building the apps");
  const result = spawnSync("pnpm", ["build"], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (result.error !== undefined || result.status !== 0) throw new Error("pnpm build failed");
}

async function main(): Promise<void> {
  build();
  const workflows: SoakWorkflow[] = [];
  if (WORKFLOWS.includes("chain"))
    workflows.push(await soakWorkflow(writeChainWorkflow(root, NODES), new Set()));
  if (WORKFLOWS.includes("parallel")) {
    parallelWorkflow = await soakWorkflow(writeParallelWorkflow(root), RACE_LOSERS);
    workflows.push(parallelWorkflow);
  }
  if (WORKFLOWS.includes("map")) {
    mapWorkflow = await soakWorkflow(writeMapWorkflow(root), MAP_RACE_LOSERS, mapRunPaths);
    workflows.push(mapWorkflow);
  }
  await startHost();
  log(
    `soak: seed ${SEED}, ${SECONDS} s, ${CONCURRENCY} runs at a time of ${WORKFLOWS.join(" and ")}, in ${root}`,
  );

  const stormEnds = Date.now() + SECONDS * 1000;
  let index = 0;
  let nextKill = Date.now() + between(KILL_MIN_MS, KILL_MAX_MS);
  let nextReport = Date.now() + 15_000;
  while (Date.now() < stormEnds) {
    const list = await sweep(true);
    const active = list.filter((s) => runs.has(s.runId) && !TERMINAL.has(s.status)).length;
    for (let i = active; i < CONCURRENCY && soakHost.up; i++) {
      const workflow = workflows[index % workflows.length] as SoakWorkflow;
      await startRun(workflow, index++);
    }
    if (Date.now() >= nextKill) {
      await killSomething();
      nextKill = Date.now() + between(KILL_MIN_MS, KILL_MAX_MS);
    }
    if (Date.now() >= nextReport) {
      log(`soak: ${Math.round((stormEnds - Date.now()) / 1000)} s left, ${JSON.stringify(figures)}`);
      nextReport = Date.now() + 15_000;
    }
    await sleep(50);
  }

  // The quiet phase: no more kills. Wait for every run to settle, then resume each parked run once.
  log("soak: the storm is over; settling every run");
  if (!soakHost.up) await startHost();
  const settled = async (what: string) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const list = await sweep(false);
      const moving = list.filter(
        (s) => runs.has(s.runId) && (["queued", "starting", "running"].includes(s.status) || onClock(s)),
      );
      if (moving.length === 0) return list;
      if (Date.now() > deadline) {
        violations.push(
          `${moving.length} runs still ${what} after 120 s: ${moving.map((s) => s.runId).join(", ")}`,
        );
        return list;
      }
      await sleep(200);
    }
  };
  const afterStorm = await settled("moving after the storm");
  const parked = afterStorm.filter((s) => runs.has(s.runId) && s.status === "parked");
  figures.parkedAfterStorm = parked.length;
  for (const summary of parked) {
    if (summary.recoveryReason === null) violations.push(`${summary.runId} parked with no reason`);
    else countReason(summary.recoveryReason.code);
    const reply = await call("runs.resume", { runId: summary.runId });
    if (reply?.kind !== "applied") violations.push(`${summary.runId}: resume was ${JSON.stringify(reply)}`);
  }
  const final = await settled("moving after one resume");
  for (const run of runs.values()) {
    const summary = final.find((s) => s.runId === run.runId);
    if (!run.checked) {
      figures.notDoneOrResumable += 1;
      violations.push(
        `${run.runId} is ${summary?.status ?? "missing"}${summary?.recoveryReason ? ` (${summary.recoveryReason.code})` : ""} after one resume`,
      );
    }
  }
  const completed = [...runs.values()].filter((r) => r.completed).length;
  figures.effectExecutions += readLedger(ledger).torn;

  await killHost();
  report(completed);
  if (process.env.SOAK_KEEP !== "1" && violations.length === 0)
    rmSync(root, { recursive: true, force: true });
  process.exitCode = violations.length === 0 ? 0 : 1;
}

function report(completed: number): void {
  const lines = [
    `soak: seed ${SEED}, ${SECONDS} s storm, ${CONCURRENCY} concurrent runs of ${WORKFLOWS.join(" and ")} (chain: ${NODES} nodes), kills every ${KILL_MIN_MS}-${KILL_MAX_MS} ms`,
    `kills: ${figures.hostKills} host, ${figures.workerKills} run workers (${figures.branchKills} with parallel or map branches in flight), ${figures.idleWorkerKills} idle workers`,
    `cancels: ${figures.cancelsApplied} applied (${figures.cancelsInFlight} with branches in flight), ${figures.cancelsLost} replies lost with the host; ${figures.runsCancelled} runs ended cancelled`,
    `runs: ${figures.runsStarted} started, ${completed} completed (${figures.parallelCompleted} parallel, ${figures.mapCompleted} map), ${figures.parkedDuringStorm} resumes during the storm, ${figures.parkedAfterStorm} parked after it (each resumed once)`,
    `park reasons: ${[...parkReasons].map(([reason, n]) => `${reason} ${n}`).join(", ") || "none"}`,
    `effects: ${figures.effectExecutions} executions, ${figures.settledEffectsReExecuted} settled effects executed again`,
    `reserves sent again after a lost reply: ${figures.reserveResends} (${figures.reservesAdopted} found the run already saved)`,
    `runs not done or resumable: ${figures.notDoneOrResumable}`,
    `invariant violations: ${violations.length}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  // The runs left behind first: they say more than a repeated per-run problem.
  const ordered = [...violations.filter((v) => v.endsWith("after one resume")), ...violations];
  for (const violation of [...new Set(ordered)].slice(0, 50))
    process.stdout.write(`VIOLATION ${violation}\n`);
  if (violations.length > 0) process.stdout.write(`scratch kept in ${root} (host log: ${hostLog})\n`);
}

main().catch(async (error) => {
  log(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await killHost().catch(() => {});
  process.exitCode = 2;
});
