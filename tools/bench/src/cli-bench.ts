/**
 * The CLI bench (`pnpm bench:cli`): what a user waits for at the shell, measured as whole processes.
 *
 * - `piw run examples/hello.workflow.ts` end to end against a warm host (preflight child, reserve,
 *   activation on the warm worker, the run, the follower's exit), median of BENCH_ROUNDS;
 * - `piw list` and `piw --version` against the same warm host;
 * - the published package: `npm pack` of apps/pi-package (tarball and unpacked size), installed with npm
 *   into a temp prefix (installed size), whose own `piw` bin runs the same commands in the same rounds
 *   (BENCH_SKIP_INSTALL=1 leaves the install out: it fetches the dependencies from the registry);
 * - the preflight alone: `evaluatePreflight` of examples/hello in its child process, beside loading
 *   the same file in this process (what `piw` did before preflight moved out of it).
 *
 * With BENCH_BASELINE=<another checkout, built>, the same commands of that checkout run in the same
 * rounds, alternating with this one, so the two are compared on the same machine at the same time.
 */
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { evaluatePreflight, loadWorkflowFile } from "@piw/engine";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

const ROUNDS = envInt("BENCH_ROUNDS", 10, 1);
const REPO = process.cwd();
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-cli-bench-"));
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Checkout {
  label: string;
  dir: string;
  /** The `piw` bin this side runs. */
  bin: string;
  home: string;
  samples: Record<"run" | "list" | "version", number[]>;
  /** Resident memory of the idle host and its idle pre-started worker, after the rounds (KiB). */
  rss?: { host: number; idleWorker: number };
}

function checkout(label: string, dir: string, bin = join(dir, "apps/piw/dist/main.js")): Checkout {
  const home = join(root, `home-${label}`);
  return { label, dir, bin, home, samples: { run: [], list: [], version: [] } };
}

function piw(c: Checkout, args: string[]): number {
  return piwOutput(c, args).ms;
}

function piwOutput(c: Checkout, args: string[]): { ms: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, [c.bin, ...args], {
    env: { ...process.env, PIW_HOME: c.home },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  const ms = performance.now() - started;
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `${c.label}: piw ${args.join(" ")} exited ${result.status}: ${result.stderr.slice(0, 500)}`,
    );
  }
  return { ms, stdout: result.stdout };
}

/** VmRSS of a live process, in KiB. */
function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.replace(/\D+/g, "") ?? Number.NaN);
}

/** The idle host's and idle worker's memory, once the warm worker is back after the last run. */
async function idleRss(c: Checkout): Promise<{ host: number; idleWorker: number } | undefined> {
  for (let i = 0; i < 100; i++) {
    const status = JSON.parse(piwOutput(c, ["host", "status", "--json"]).stdout) as {
      pid?: number;
      idleWorkerPid?: number | null;
    };
    if (typeof status.pid === "number" && typeof status.idleWorkerPid === "number") {
      // Let the new worker finish loading before it is read.
      await new Promise((r) => setTimeout(r, 1000));
      return { host: rssKiB(status.pid), idleWorker: rssKiB(status.idleWorkerPid) };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function build(): void {
  if (process.env.BENCH_SKIP_BUILD === "1") return;
  const result = spawnSync("pnpm", ["build"], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (result.error !== undefined || result.status !== 0) throw new Error("pnpm build failed");
}

interface PackedPackage {
  tarballBytes: number;
  unpackedBytes: number;
  files: number;
  /** `node_modules` of a fresh npm install of the tarball, and its largest packages. */
  installed?: { bytes: number; largest: Array<{ name: string; bytes: number }>; bin: string };
}

/** Bytes of the files under `dir` (their sizes, not disk blocks), links not followed. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

function run(command: string, args: string[], cwd: string): string {
  const npmEnv = { ...process.env, npm_config_cache: join(process.env.HOME ?? root, ".npm") };
  const result = spawnSync(command, args, { cwd, env: npmEnv, encoding: "utf8", timeout: 300_000 });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed: ${(result.stderr ?? "").slice(0, 500)}`);
  }
  return result.stdout;
}

/** `npm pack` of the published package, then (unless skipped) `npm install` of the tarball. */
function packedPackage(): PackedPackage {
  const pack = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", root], join(REPO, "apps/pi-package")),
  ) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>;
  const [packed] = pack;
  if (packed === undefined) throw new Error("npm pack reported no tarball");
  const result: PackedPackage = {
    tarballBytes: packed.size,
    unpackedBytes: packed.unpackedSize,
    files: packed.entryCount,
  };
  if (process.env.BENCH_SKIP_INSTALL === "1") return result;
  const prefix = join(root, "prefix");
  mkdirSync(prefix);
  const tarball = join(root, packed.filename);
  run("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", tarball], root);
  const modules = join(prefix, "node_modules");
  const largest = readdirSync(modules)
    .filter((name) => !name.startsWith("."))
    .flatMap((name) =>
      name.startsWith("@") ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
    )
    .map((name) => ({ name, bytes: treeBytes(join(modules, name)) }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 4);
  result.installed = { bytes: treeBytes(modules), largest, bin: join(modules, "piw", "dist", "piw.js") };
  return result;
}

const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const MB = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

async function preflightSamples(): Promise<{ child: number[]; inProcessFirstMs: number }> {
  const file = join(REPO, "examples/hello.workflow.ts");
  const command = [process.execPath, join(REPO, "apps/worker/dist/preflight.js")];
  // What `piw run` paid before the preflight moved into a child: this process's first load of the file.
  const started = performance.now();
  await loadWorkflowFile(file);
  const inProcessFirstMs = performance.now() - started;
  const child: number[] = [];
  for (let i = 0; i <= ROUNDS; i++) {
    const started = performance.now();
    const outcome = await evaluatePreflight(
      { type: "launch", requestId: `bench-${i}`, ref: file, cwd: REPO, task: "hi", piSession: false },
      { command, timeoutMs: 30_000, env: process.env },
    );
    const ms = performance.now() - started;
    if (outcome.kind !== "replied" || outcome.reply.type !== "launch.prepared") {
      throw new Error(
        `the preflight child did not prepare the launch: ${JSON.stringify(outcome).slice(0, 300)}`,
      );
    }
    if (i > 0) child.push(ms); // round 0 warms the disk cache
  }
  return { child, inProcessFirstMs };
}

async function main(): Promise<void> {
  build();
  const packed = packedPackage();
  const sides = [
    checkout("current", REPO),
    ...(packed.installed ? [checkout("packed", REPO, packed.installed.bin)] : []),
    ...(BASELINE ? [checkout("baseline", BASELINE)] : []),
  ];
  for (const side of sides) piw(side, ["run", join(side.dir, "examples/hello.workflow.ts"), "warm up"]);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      side.samples.run.push(
        piw(side, ["run", join(side.dir, "examples/hello.workflow.ts"), `round ${round}`]),
      );
      side.samples.list.push(piw(side, ["list"]));
      try {
        side.samples.version.push(piw(side, ["--version"]));
      } catch (error) {
        // The baseline may predate --version; then it has no figure for it.
        if (side.label !== "baseline") throw error;
      }
    }
  }
  for (const side of sides) {
    side.rss = await idleRss(side);
    piw(side, ["host", "stop"]);
  }
  const preflight = await preflightSamples();

  const lines = [`piw CLI, ${ROUNDS} rounds, medians (ms)${BASELINE ? `; baseline ${BASELINE}` : ""}`];
  for (const side of sides) {
    lines.push(
      `  ${side.label.padEnd(8)} piw run hello ${median(side.samples.run).toFixed(0)}  piw list ${median(side.samples.list).toFixed(0)}` +
        (side.samples.version.length > 0
          ? `  piw --version ${median(side.samples.version).toFixed(0)}`
          : "") +
        (side.rss
          ? `  idle RSS: host ${(side.rss.host / 1024).toFixed(0)} MiB, worker ${(side.rss.idleWorker / 1024).toFixed(0)} MiB`
          : ""),
    );
  }
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  lines.push(`  load average at the end: ${load}`);
  lines.push(
    `  package: tarball ${kB(packed.tarballBytes)}, unpacked ${kB(packed.unpackedBytes)}, ${packed.files} files` +
      (packed.installed
        ? `; installed node_modules ${MB(packed.installed.bytes)} (${packed.installed.largest.map((p) => `${p.name} ${MB(p.bytes)}`).join(", ")})`
        : ""),
  );
  lines.push(
    `  preflight of hello in its child ${median(preflight.child).toFixed(0)}; loading it in this process, the first time ${preflight.inProcessFirstMs.toFixed(0)}`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
  rmSync(root, { recursive: true, force: true });
}

main().catch((error) => {
  log(`bench:cli: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
