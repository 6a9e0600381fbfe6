/**
 * The random-kill soak (`pnpm soak`): a real host process and its real workers run many workflows
 * (actions, shell commands that fail their first attempt and are retried after a durable pause,
 * compute nodes and waits on the host's clock) at once while a seeded schedule kills them with SIGKILL — the host (then started again), run
 * workers and the idle warm worker. After the storm the kills stop and every run is settled: a run
 * must be `done/completed`, or `parked` with a recovery reason and then finish after exactly one
 * `runs.resume`. Every managed effect appends a line to a ledger before it does its work, so the
 * soak can tell whether an effect the store had already settled was ever executed again.
 *
 * Invariants, checked for each run as soon as it completes and for all of them at the end:
 * - no run ends `failed` or `cancelled` (the workflow itself never fails);
 * - a completed run has every node succeeded, each visited once;
 * - every effect is settled, and no execution of it started after it was settled;
 * - after the storm, every run is done, or parked with a reason and completes after one resume.
 *
 * Settings (env): SOAK_SEED (1), SOAK_SECONDS (180), SOAK_CONCURRENCY (4), SOAK_NODES (12),
 * SOAK_KILL_MIN_MS (250), SOAK_KILL_MAX_MS (1500), SOAK_SKIP_BUILD=1 to use the apps already built,
 * SOAK_DIR for the scratch folder (a temp dir by default, removed unless SOAK_KEEP=1).
 * It is a script, not a test: it prints its figures and exits 1 if any invariant failed.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallArgs, type CallParams, connectHost, type HostClient, newRequestKey } from "@piw/client";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import {
  type ClientMethod,
  type ClientResult,
  isClockReason,
  type JsonValue,
  type RunHistory,
  type RunSummary,
  type RunView,
} from "@piw/protocol";

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

// ---------------------------------------------------------------------------------------------------
// The workflow: a chain of actions (one idempotent effect each), shell commands whose first attempt
// fails (retried after a durable pause), compute nodes and short waits on the host's clock.

/** The node kinds of the chain, in turn; each action saves one effect. */
const KINDS = ["action", "shell", "compute", "wait"] as const;
const ACTIONS = Array.from({ length: NODES }, (_, i) => KINDS[i % KINDS.length]).filter(
  (kind) => kind === "action",
).length;

function writeWorkflow(): string {
  const kinds = KINDS;
  const lines = [
    'import { appendFileSync } from "node:fs";',
    'import { action, compute, defineWorkflow, shell, wait, type ActionContext } from "piw";',
    'import { z } from "zod";',
    "",
    "type Input = { tag: string; ledger: string };",
    "",
    "/** Writes the ledger line before the effect's work, so an execution cut short is counted too. */",
    "const step = ({ input, node, effects }: ActionContext<Input>) =>",
    '  effects.idempotent("soak.effect", { tag: input.tag, path: node.path }, async () => {',
    "    const startedAt = Date.now();",
    '    appendFileSync(input.ledger, JSON.stringify({ tag: input.tag, path: node.path, visit: node.visit, startedAt }) + "\\n");',
    "    await new Promise((done) => setTimeout(done, 10 + Math.floor(Math.random() * 60)));",
    "    return { startedAt };",
    "  });",
    "",
    "/** Fails the first attempt of each visit (a flag file marks it), then sleeps briefly and succeeds. */",
    "const flakyOnce = ({ input, node }: { input: Input; node: { path: string; visit: number } }) => [",
    '  "sh", "-c", \'f="$1.$2"; test -e "$f" || { : > "$f"; exit 1; }; sleep 0.05\', "soak",',
    '  input.ledger, [input.tag, node.path.replace(/\\W/g, "_"), node.visit].join("-"),',
    "];",
    "const RETRY = { attempts: 4, backoff: { initialMs: 100, factor: 2, maxMs: 1_000 } };",
    "",
    "export default defineWorkflow({",
    '  name: "soak",',
    "  input: z.object({ tag: z.string(), ledger: z.string() }),",
    '  startAt: "n0",',
    "  nodes: {",
  ];
  for (let i = 0; i < NODES; i++) {
    const kind = kinds[i % kinds.length];
    if (kind === "action") lines.push(`    n${i}: action({ run: step }),`);
    else if (kind === "shell") lines.push(`    n${i}: shell({ exec: flakyOnce, retry: RETRY }),`);
    else if (kind === "wait") lines.push(`    n${i}: wait({ ms: 150 }),`);
    else lines.push(`    n${i}: compute({ run: ({ node }) => node.visit }),`);
  }
  lines.push("  },", "  edges: {");
  for (let i = 0; i < NODES; i++) lines.push(`    n${i}: { to: "${i + 1 < NODES ? `n${i + 1}` : "done"}" },`);
  lines.push("  },", "});", "");
  const file = join(root, "soak.workflow.ts");
  writeFileSync(file, lines.join("\n"));
  return file;
}

// ---------------------------------------------------------------------------------------------------
// The host: `apps/host/dist/main.js`, started again after every kill.

let host: { process: ChildProcess; pid: number; client: HostClient } | undefined;

async function startHost(): Promise<void> {
  const fd = openSync(hostLog, "a");
  const env: NodeJS.ProcessEnv = { ...process.env, PIW_HOME: stateDir };
  delete env.PIW_WORKER_COMMAND;
  const child = spawn(process.execPath, [HOST_MAIN], { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${HOST_MAIN}`);
  const deadline = Date.now() + 20_000;
  for (;;) {
    let client: HostClient | undefined;
    try {
      client = await connectHost({ stateDir, client: "test", autoStart: false });
      const status = await client.call("host.status");
      if (status.pid !== child.pid) throw new Error(`host ${status.pid} answered, expected ${child.pid}`);
      client.on("disconnect", () => {});
      host = { process: child, pid: child.pid, client };
      return;
    } catch (error) {
      client?.close();
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the host did not come up: ${String(error)}\n${tail(hostLog)}`);
      }
      await sleep(50);
    }
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "";
  }
}

async function killHost(): Promise<void> {
  if (host === undefined) return;
  const current = host;
  host = undefined;
  current.client.close();
  const exited = new Promise<void>((done) => {
    if (current.process.exitCode !== null || current.process.signalCode !== null) done();
    else current.process.once("exit", () => done());
  });
  current.process.kill("SIGKILL");
  await exited;
}

/** A call to the current host; `undefined` when the host is down or went away during the call. */
async function call<M extends ClientMethod>(
  method: M,
  ...args: CallArgs<M>
): Promise<ClientResult<M> | undefined> {
  const current = host;
  if (current === undefined) return undefined;
  try {
    return await current.client.call(method, ...args);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// Runs and their invariants.

interface SoakRun {
  runId: string;
  tag: string;
  resumes: number;
  /** Its end was looked at (completed and checked, or a violation recorded). */
  checked: boolean;
  completed: boolean;
}

const runs = new Map<string, SoakRun>();
const violations: string[] = [];
const figures = {
  hostKills: 0,
  workerKills: 0,
  idleWorkerKills: 0,
  runsStarted: 0,
  parkedDuringStorm: 0,
  resumesDuringStorm: 0,
  parkedAfterStorm: 0,
  effectExecutions: 0,
  settledEffectsReExecuted: 0,
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

async function startRun(loaded: LoadedWorkflow, index: number): Promise<void> {
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

interface LedgerLine {
  tag: string;
  path: string;
  visit: number;
  startedAt: number;
}

function readLedger(): LedgerLine[] {
  let text = "";
  try {
    text = readFileSync(ledger, "utf8");
  } catch {
    return [];
  }
  const lines: LedgerLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      lines.push(JSON.parse(line) as LedgerLine);
    } catch {
      // A line torn by a kill in the middle of its write: the execution started, but the line
      // cannot be attributed. It is counted, not matched.
      figures.effectExecutions += 1;
    }
  }
  return lines;
}

/** The invariants of one completed run: nodes, effects and the ledger agree. */
function checkCompletedRun(run: SoakRun, view: RunView, history: RunHistory): void {
  run.checked = true;
  run.completed = true;
  const problems: string[] = [];
  if (view.nodes.length !== NODES) problems.push(`${view.nodes.length} nodes in the view`);
  for (const node of view.nodes) {
    if (node.state !== "succeeded" || node.visits !== 1) {
      problems.push(`${node.path} is ${node.state} after ${node.visits} visits`);
    }
  }
  // The saved effects as the host reads them from the store (`runs.history`).
  const effects = history.effects;
  const expected = ACTIONS;
  if (effects.length !== expected) problems.push(`${effects.length} effects saved, expected ${expected}`);
  const executions = readLedger().filter((line) => line.tag === run.tag);
  for (const effect of effects) {
    if (effect.status !== "settled" || effect.settledAt === null) {
      problems.push(`effect at ${effect.path} is ${effect.status}`);
      continue;
    }
    const mine = executions.filter((line) => line.path === effect.path && line.visit === effect.visit);
    if (mine.length === 0) problems.push(`effect at ${effect.path} settled without running`);
    const late = mine.filter((line) => line.startedAt > (effect.settledAt as number));
    figures.settledEffectsReExecuted += late.length;
    if (late.length > 0) problems.push(`effect at ${effect.path} ran ${late.length} times after it settled`);
  }
  figures.effectExecutions += executions.length;
  if (problems.length > 0) violations.push(`${run.runId}: ${problems.join("; ")}`);
}

// ---------------------------------------------------------------------------------------------------
// The storm.

async function killSomething(): Promise<void> {
  const choice = random();
  if (choice < 0.2 || host === undefined) {
    await killHost();
    figures.hostKills += 1;
    await sleep(between(0, 400));
    await startHost();
    return;
  }
  const status = (await call("host.status")) as
    | { workers: { pid: number | null }[]; idleWorkerPid?: number | null }
    | undefined;
  if (status === undefined) return;
  const busy = status.workers.map((w) => w.pid).filter((pid): pid is number => pid !== null);
  const idle = status.idleWorkerPid ?? null;
  if (choice < 0.35 && idle !== null) {
    if (signal(idle)) figures.idleWorkerKills += 1;
    return;
  }
  const victim = busy[Math.floor(random() * busy.length)];
  if (victim !== undefined && signal(victim)) figures.workerKills += 1;
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

/** Look at every run once: check completed ones, note failures, resume parked ones if asked. */
async function sweep(resumeParked: boolean): Promise<RunSummary[]> {
  const list = await call("runs.list", { limit: 1000 });
  if (list === undefined) return [];
  for (const summary of list) {
    const run = runs.get(summary.runId);
    if (run === undefined || run.checked) continue;
    if (summary.status === "done" && summary.outcome === "completed") {
      const view = await call("runs.get", { runId: run.runId });
      const history = await call("runs.history", { runId: run.runId });
      if (view && history) checkCompletedRun(run, view, history);
    } else if (TERMINAL.has(summary.status)) {
      run.checked = true;
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

function build(): void {
  if (process.env.SOAK_SKIP_BUILD === "1") return;
  log("soak: building the apps");
  const result = spawnSync("pnpm", ["build"], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (result.error !== undefined || result.status !== 0) throw new Error("pnpm build failed");
}

async function main(): Promise<void> {
  build();
  const loaded = await loadWorkflowFile(writeWorkflow());
  await startHost();
  log(`soak: seed ${SEED}, ${SECONDS} s, ${CONCURRENCY} runs at a time, ${NODES} nodes each, in ${root}`);

  const stormEnds = Date.now() + SECONDS * 1000;
  let index = 0;
  let nextKill = Date.now() + between(KILL_MIN_MS, KILL_MAX_MS);
  let nextReport = Date.now() + 15_000;
  while (Date.now() < stormEnds) {
    const list = await sweep(true);
    const active = list.filter((s) => runs.has(s.runId) && !TERMINAL.has(s.status)).length;
    for (let i = active; i < CONCURRENCY && host !== undefined; i++) await startRun(loaded, index++);
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
  if (host === undefined) await startHost();
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

  await killHost();
  report(completed);
  if (process.env.SOAK_KEEP !== "1" && violations.length === 0)
    rmSync(root, { recursive: true, force: true });
  process.exitCode = violations.length === 0 ? 0 : 1;
}

function report(completed: number): void {
  const lines = [
    `soak: seed ${SEED}, ${SECONDS} s storm, ${CONCURRENCY} concurrent runs of ${NODES} nodes, kills every ${KILL_MIN_MS}-${KILL_MAX_MS} ms`,
    `kills: ${figures.hostKills} host, ${figures.workerKills} run workers, ${figures.idleWorkerKills} idle workers`,
    `runs: ${figures.runsStarted} started, ${completed} completed, ${figures.parkedDuringStorm} resumes during the storm, ${figures.parkedAfterStorm} parked after it (each resumed once)`,
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
