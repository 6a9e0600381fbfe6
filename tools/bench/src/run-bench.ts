/**
 * The user's commands bench (`pnpm bench:run`): what a person waits for at the shell, each command a
 * whole `piw` process timed from spawn to exit, against a state with BENCH_RUNS (default 10,000)
 * finished runs and a warm host:
 *
 * - `piw run examples/hello.workflow.ts world` (preflight, reserve, activation on the warm worker, both
 *   nodes, the follower's exit), the same task each round: its prepared launch is reused from the
 *   launch cache after the warm-up. Three ways: the first run after the host started (its pre-started
 *   worker has loaded nothing yet), a run while the worker the previous run woke still waits (a person
 *   at work: the headline), and once at the end after 35 s with no run (the woken worker was replaced
 *   by one that loads on the launch's hello); and with a new task each round (`round <n>`), which the
 *   launch cache misses;
 * - `piw list`, `piw list --json`, `piw status <runId>` (a seeded run), `piw --version`;
 * - the first `piw list` after `piw host stop`: the host starting on that store and serving.
 *
 * BENCH_ROUNDS rounds (default 10), each command's min / median / max. With BENCH_BASELINE=<another
 * checkout, built>, that checkout's same commands run in the same rounds, alternating order round by
 * round, on its own copy of the same seeded state, so the two are compared at the same moment on the
 * same machine. At the end: resident memory of each side's idle host and idle pre-started worker, 1 s
 * after the last run and again 35 s later (past the wake linger: see the host's warm-worker.ts).
 * BENCH_SKIP_BUILD=1 uses the dists as they are.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

const ROUNDS = envInt("BENCH_ROUNDS", 10, 1);
const RUNS = envInt("BENCH_RUNS", 10_000, 1);
const REPO = process.cwd();
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-run-bench-"));
const log = (line: string) => process.stderr.write(`${line}\n`);

const COMMANDS = [
  "run hello world",
  "run hello, new task",
  "run hello, host start",
  "run hello, idle 35 s",
  "list",
  "list --json",
  "status",
  "--version",
  "restart → list",
] as const;
type Command = (typeof COMMANDS)[number];

interface Side {
  label: string;
  dir: string;
  bin: string;
  home: string;
  samples: Record<Command, number[]>;
  /** A seeded run that `piw status` shows. */
  runId?: string;
  /** `quietWorker`: the idle worker once no launch came for longer than a woken worker waits for one. */
  rss?: { host: number; idleWorker: number; quietWorker: number };
}

/** Past the host's wake linger (30 s): a worker woken after the last run has been replaced by then. */
const QUIET_MS = 35_000;

function side(label: string, dir: string): Side {
  const samples = Object.fromEntries(COMMANDS.map((c) => [c, [] as number[]])) as Record<Command, number[]>;
  return { label, dir, bin: join(dir, "apps/piw/dist/main.js"), home: join(root, `home-${label}`), samples };
}

function piw(s: Side, args: string[]): { ms: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, [s.bin, ...args], {
    env: { ...process.env, PIW_HOME: s.home, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `${s.label}: piw ${args.join(" ")} exited ${result.status}: ${result.stderr.slice(0, 500)}`,
    );
  }
  return { ms, stdout: result.stdout };
}

function build(dir: string): void {
  const result = spawnSync("pnpm", ["build"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  if (result.error !== undefined || result.status !== 0) throw new Error(`pnpm build failed in ${dir}`);
}

/** Seeds RUNS finished runs with `dir`'s own store, or copies a seeded state of the same schema. */
function seed(s: Side, seeded: Map<string, string>): void {
  const schema = readFileSync(join(s.dir, "packages/store/src/schema.ts"), "utf8");
  const done = seeded.get(schema);
  if (done !== undefined) {
    cpSync(done, s.home, { recursive: true });
    return;
  }
  const began = performance.now();
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", join(REPO, "tools/bench/src/prepare-runs.ts"), s.dir, s.home, String(RUNS)],
    { cwd: s.dir, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (result.error !== undefined || result.status !== 0) throw new Error(`${s.label}: seeding failed`);
  log(`${s.label}: seeded ${RUNS} runs in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  seeded.set(schema, s.home);
}

interface HostStatus {
  pid?: number;
  idleWorkerPid?: number | null;
}

/** Waits for the host's pre-started worker, so a `piw run` meets a warm host. */
async function idleWorker(s: Side): Promise<HostStatus & { pid: number; idleWorkerPid: number }> {
  for (let i = 0; i < 300; i++) {
    const status = JSON.parse(piw(s, ["host", "status", "--json"]).stdout) as HostStatus;
    if (typeof status.pid === "number" && typeof status.idleWorkerPid === "number") {
      return { ...status, pid: status.pid, idleWorkerPid: status.idleWorkerPid };
    }
    await sleep(100);
  }
  throw new Error(`${s.label}: the host has no idle worker after 30 s`);
}

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.replace(/\D+/g, "") ?? Number.NaN);
}

/** A run ID from the seeded runs (not a hello run): the oldest on the first page of `piw list --json`. */
function seededRunId(s: Side): string {
  const listed = JSON.parse(piw(s, ["list", "--json", "--limit", "50"]).stdout) as unknown;
  const runs = Array.isArray(listed) ? listed : ((listed as { runs?: unknown[] }).runs ?? []);
  const ids = runs
    .map((r) => (r as { runId?: unknown }).runId)
    .filter((id): id is string => typeof id === "string" && id.startsWith("seeded"));
  const id = ids.at(-1);
  if (id === undefined) throw new Error(`${s.label}: no seeded run in piw list --json`);
  return id;
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
function median(values: number[]): number {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function round(s: Side, n: number): Promise<void> {
  piw(s, ["host", "stop"]);
  s.samples["restart → list"].push(piw(s, ["list"]).ms);
  await idleWorker(s);
  const hello = join(s.dir, "examples/hello.workflow.ts");
  s.samples["run hello, host start"].push(piw(s, ["run", hello, "world"]).ms);
  // Each start waits for the warm worker the previous one's run used up.
  await idleWorker(s);
  s.samples["run hello, new task"].push(piw(s, ["run", hello, `round ${n}`]).ms);
  await idleWorker(s);
  s.samples["run hello world"].push(piw(s, ["run", hello, "world"]).ms);
  s.samples.list.push(piw(s, ["list"]).ms);
  s.samples["list --json"].push(piw(s, ["list", "--json"]).ms);
  s.samples.status.push(piw(s, ["status", s.runId ?? ""]).ms);
  s.samples["--version"].push(piw(s, ["--version"]).ms);
}

function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

async function main(): Promise<void> {
  const sides = [side("current", REPO), ...(BASELINE ? [side("baseline", BASELINE)] : [])];
  if (process.env.BENCH_SKIP_BUILD !== "1") for (const s of sides) build(s.dir);
  const seeded = new Map<string, string>();
  for (const s of sides) seed(s, seeded);
  for (const s of sides) {
    s.runId = seededRunId(s);
    piw(s, ["run", join(s.dir, "examples/hello.workflow.ts"), "world"]);
  }
  const loadBefore = loadAverage();
  for (let n = 0; n < ROUNDS; n++) {
    for (const s of n % 2 === 0 ? sides : [...sides].reverse()) await round(s, n);
    log(`round ${n + 1}/${ROUNDS} done`);
  }
  const loadAfter = loadAverage();
  const afterRun = await Promise.all(sides.map((s) => idleWorker(s)));
  await sleep(1000); // let the new worker finish loading before it is read
  const justAfter = afterRun.map((status) => rssKiB(status.idleWorkerPid));
  await sleep(QUIET_MS);
  for (const [i, s] of sides.entries()) {
    const status = await idleWorker(s);
    s.rss = {
      host: rssKiB(status.pid),
      idleWorker: justAfter[i] ?? Number.NaN,
      quietWorker: rssKiB(status.idleWorkerPid),
    };
    // One sample: what a run costs once the worker has gone quiet.
    s.samples["run hello, idle 35 s"].push(
      piw(s, ["run", join(s.dir, "examples/hello.workflow.ts"), "world"]).ms,
    );
    piw(s, ["host", "stop"]);
  }

  const commit = (dir: string) =>
    spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).stdout.trim();
  const lines = [
    `piw commands, ${ROUNDS} rounds, ${RUNS} seeded runs; load ${loadBefore} before, ${loadAfter} after`,
    ...sides.map((s) => `  ${s.label}: ${s.dir} at ${commit(s.dir)}`),
    `  ${"command".padEnd(28)}${sides.map((s) => `${s.label} min / median / max (ms)`.padEnd(40)).join("")}${BASELINE ? "current / baseline, medians" : ""}`,
  ];
  for (const command of COMMANDS) {
    const cells = sides.map((s) => {
      const v = sorted(s.samples[command]);
      return `${(v[0] ?? Number.NaN).toFixed(0)} / ${median(v).toFixed(0)} / ${(v.at(-1) ?? Number.NaN).toFixed(0)}`.padEnd(
        40,
      );
    });
    const [current, baseline] = sides;
    const ratio =
      current && baseline
        ? `${(median(current.samples[command]) / median(baseline.samples[command])).toFixed(2)}×`
        : "";
    lines.push(`  ${`piw ${command}`.padEnd(28)}${cells.join("")}${ratio}`);
  }
  for (const s of sides) {
    if (s.rss === undefined) continue;
    lines.push(
      `  ${s.label} idle RSS: host ${(s.rss.host / 1024).toFixed(0)} MiB, worker ${(s.rss.idleWorker / 1024).toFixed(0)} MiB 1 s after the last run, ${(s.rss.quietWorker / 1024).toFixed(0)} MiB ${QUIET_MS / 1000} s after`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  rmSync(root, { recursive: true, force: true });
}

main().catch((error) => {
  log(`bench:run: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
