/**
 * The store benchmark (`pnpm bench:store`): what one durable node transition costs through RunStore,
 * against bare better-sqlite3 writing the same rows, at synchronous=FULL and NORMAL, next to this
 * disk's raw commit rate. Figures and their reading live in docs/performance.md ("Store").
 *
 * Environment: BENCH_ITERATIONS (default 3000), BENCH_WARMUP (default N/10, 50..500), BENCH_ROUNDS
 * (default 3), BENCH_DIR (parent of the temp state dirs, default the OS temp dir).
 *
 * Run from the repository root: tsx resolves `@piw/store` and `@piw/protocol` to their `src` through
 * the `paths` of tsconfig.base.json, so no build is needed and the figures are for the current source.
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Fence, JsonValue } from "@piw/protocol";
import { type RunStore, STATE_FILE_NAME, type SynchronousMode } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";
// The one deliberate exception to the `sqlite-only-in-store` boundary rule (which `pnpm boundaries`
// checks over packages/ and apps/ only): the baseline must write the store's rows with no store in
// between. Nothing outside this benchmark may import a SQLite binding.
import Database from "better-sqlite3";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}.`);
  return value;
}

const N = envInt("BENCH_ITERATIONS", 3000, 1);
const WARMUP = envInt("BENCH_WARMUP", Math.min(500, Math.max(50, Math.round(N / 10))), 0);
const ROUNDS = envInt("BENCH_ROUNDS", 3, 1);
const TOTAL = WARMUP + N;
const MODES: SynchronousMode[] = ["FULL", "NORMAL"];

const RUN_ID = "bench-run-1";
const CLAIM_TOKEN = "bench-claim-1";
const NODE_KIND = "compute";

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-store-bench-"));
let dirCount = 0;
function freshDir(): string {
  const dir = join(root, `s${++dirCount}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** The node path of iteration `i` (warm-up included); each is visit 1 of its own node. */
const nodePath = (i: number) => `bench/node-${i}`;

/**
 * A node output of ~200 bytes, distinct per iteration so every op stores a new blob. Keys are sorted at
 * every level, so `JSON.stringify` gives the store's canonical JSON and both sides hash the same text.
 */
function nodeOutput(i: number): JsonValue {
  return {
    files: ["src/index.ts", "src/store.ts", "test/store.test.ts"],
    iteration: i,
    ok: true,
    score: (i * 7919) % 1000,
    summary: `Iteration ${i}: inspected the workspace and wrote a short note about what changed.`,
    tokens: { input: 1200 + (i % 97), output: 300 + (i % 13) },
  };
}

// ---------------------------------------------------------------------------------------------------
// Template state files, made once and copied into each fresh state dir so every measurement starts
// from the same checkpointed file (closing the last connection checkpoints and removes the WAL).

function makeTemplate(openVisits: number): string {
  const dir = freshDir();
  const store = openTunedStore({ stateDir: dir, synchronous: "NORMAL" });
  const fence = runningRun(store);
  for (let i = 0; i < openVisits; i++) {
    saved(store.startNodeVisit(fence, { path: nodePath(i), visit: 1, nodeKind: NODE_KIND }));
  }
  store.close();
  return join(dir, STATE_FILE_NAME);
}

function stateDirFrom(template: string): string {
  const dir = freshDir();
  copyFileSync(template, join(dir, STATE_FILE_NAME));
  return dir;
}

function saved<T>(t: { kind: string; value?: T }): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value as T;
  throw new Error(`Expected a saved transition, got ${JSON.stringify(t)}.`);
}

function runningRun(store: RunStore): Fence {
  saved(
    store.reservePreparedRun({
      runId: RUN_ID,
      workflowName: "bench",
      source: { kind: "file", path: "/tmp/bench.workflow.ts", sha256: "a".repeat(64) },
      definitionDigest: "bench-digest",
      manifest: { nodes: ["bench"] },
      input: { task: "benchmark" },
      origin: { kind: "cli" },
    }),
  );
  const claim = saved(store.claimRun({ runId: RUN_ID, claimToken: CLAIM_TOKEN, leaseMs: 3_600_000 }));
  const fence = { runId: RUN_ID, generation: claim.command.generation, claimToken: claim.command.claimToken };
  saved(store.markRunning(fence));
  return fence;
}

function fenceOf(store: RunStore): Fence {
  const run = store.getRun(RUN_ID);
  if (!run) throw new Error("The benchmark run is missing.");
  return { runId: RUN_ID, generation: run.generation, claimToken: CLAIM_TOKEN };
}

// ---------------------------------------------------------------------------------------------------
// Timing. The sides being compared run interleaved in blocks of BLOCK ops (rotating which goes
// first), so load from other jobs on this shared machine lands on all of them alike.

const BLOCK = 100;

interface Side {
  op(i: number): void;
  close(): void;
  /** The state file, for the same-rows check; "" when there is none to compare. */
  file: string;
}

interface Sample {
  opsPerSec: number;
  p50us: number;
  p99us: number;
  /** User + system CPU time of this process per op: what is not spent waiting on the disk. */
  cpuUs: number;
}

function percentile(sorted: Float64Array, q: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Warm every side up, then time N ops of each, interleaved by block; closes the sides. */
function measure(sides: Side[]): Sample[] {
  for (const side of sides) for (let i = 0; i < WARMUP; i++) side.op(i);
  const latencies = sides.map(() => new Float64Array(N));
  const wallMs = sides.map(() => 0);
  const cpuUs = sides.map(() => 0);
  for (let block = 0; block * BLOCK < N; block++) {
    const from = block * BLOCK;
    const to = Math.min(N, from + BLOCK);
    for (let r = 0; r < sides.length; r++) {
      const s = (block + r) % sides.length;
      const side = sides[s] as Side;
      const lat = latencies[s] as Float64Array;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let k = from; k < to; k++) {
        const t = performance.now();
        side.op(WARMUP + k);
        lat[k] = performance.now() - t;
      }
      wallMs[s] = (wallMs[s] as number) + performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      cpuUs[s] = (cpuUs[s] as number) + cpu.user + cpu.system;
    }
  }
  for (const side of sides) side.close();
  return sides.map((_, s) => {
    const lat = (latencies[s] as Float64Array).sort();
    return {
      opsPerSec: (N * 1000) / (wallMs[s] as number),
      p50us: percentile(lat, 0.5) * 1000,
      p99us: percentile(lat, 0.99) * 1000,
      cpuUs: (cpuUs[s] as number) / N,
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// (a) RunStore: the fenced, typed, validated transitions.

type Op = "finish" | "pair";

function storeSide(template: string, mode: SynchronousMode, what: Op): Side {
  const dir = stateDirFrom(template);
  const store = openTunedStore({ stateDir: dir, synchronous: mode });
  const fence = fenceOf(store);
  const finish = (i: number) => {
    const t = store.finishNodeVisit(fence, {
      path: nodePath(i),
      visit: 1,
      result: { status: "succeeded", output: nodeOutput(i), next: nodePath(i + 1) },
    });
    if (t.kind !== "applied") throw new Error(`finishNodeVisit: ${JSON.stringify(t)}`);
  };
  const start = (i: number) => {
    const t = store.startNodeVisit(fence, { path: nodePath(i), visit: 1, nodeKind: NODE_KIND });
    if (t.kind !== "applied") throw new Error(`startNodeVisit: ${JSON.stringify(t)}`);
  };
  return {
    op:
      what === "finish"
        ? finish
        : (i) => {
            start(i);
            finish(i);
          },
    close: () => store.close(),
    file: join(dir, STATE_FILE_NAME),
  };
}

// ---------------------------------------------------------------------------------------------------
// (b) Bare better-sqlite3: the same schema, pragmas and rows, prepared statements, one IMMEDIATE
// transaction per store transaction, and no reads, validation or guards.

function openRaw(file: string, mode: SynchronousMode): Database.Database {
  const db = new Database(file, { fileMustExist: true });
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${mode}`);
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  return db;
}

function rawSide(template: string, mode: SynchronousMode, what: Op): Side {
  const file = join(stateDirFrom(template), STATE_FILE_NAME);
  const db = openRaw(file, mode);
  // The run's counters are read once, outside the timing; the baseline then tracks them itself.
  const head = db.prepare("SELECT revision, step_count FROM runs WHERE run_id = ?").get(RUN_ID) as {
    revision: number;
    step_count: number;
  };
  let revision = head.revision;
  let stepCount = head.step_count;
  const insertBlob = db.prepare(
    "INSERT INTO blobs (hash, media_type, size, content, created_at) VALUES (?, 'application/json', ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
  );
  const finishStep = db.prepare(
    "UPDATE run_steps SET status = 'succeeded', output_hash = ?, error_code = NULL, error_hash = NULL, next_path = ?, finished_at = ? WHERE run_id = ? AND path = ? AND visit = ?",
  );
  const bumpProgress = db.prepare(
    "UPDATE runs SET revision = ?, updated_at = ?, progress_revision = ? WHERE run_id = ?",
  );
  const insertStep = db.prepare(
    "INSERT INTO run_steps (run_id, path, visit, node_kind, attempt, status, started_at) VALUES (?, ?, 1, ?, 1, 'running', ?)",
  );
  const bumpCursor = db.prepare(
    "UPDATE runs SET step_count = ?, cursor_path = ?, cursor_visit = 1, revision = ?, updated_at = ? WHERE run_id = ?",
  );
  const insertEvent = db.prepare(
    "INSERT INTO run_events (run_id, revision, type, path, visit, data, at) VALUES (?, ?, ?, ?, 1, ?, ?)",
  );
  const startedData = JSON.stringify({ kind: NODE_KIND });

  const start = db.transaction((i: number) => {
    const now = Date.now();
    const path = nodePath(i);
    revision += 1;
    stepCount += 1;
    insertStep.run(RUN_ID, path, NODE_KIND, now);
    bumpCursor.run(stepCount, path, revision, now, RUN_ID);
    insertEvent.run(RUN_ID, revision, "node.started", path, startedData, now);
  });
  const finish = db.transaction((i: number) => {
    const now = Date.now();
    const path = nodePath(i);
    // Serializing and hashing the output is part of writing a content-addressed row, so it is timed.
    const text = JSON.stringify(nodeOutput(i));
    const content = Buffer.from(text, "utf8");
    const hash = createHash("sha256").update(`application/json\n${text}`).digest("hex");
    revision += 1;
    insertBlob.run(hash, content.byteLength, content, now);
    finishStep.run(hash, nodePath(i + 1), now, RUN_ID, path, 1);
    bumpProgress.run(revision, now, revision, RUN_ID);
    insertEvent.run(RUN_ID, revision, "node.succeeded", path, null, now);
  });
  return {
    op:
      what === "finish"
        ? (i) => finish.immediate(i)
        : (i) => {
            start.immediate(i);
            finish.immediate(i);
          },
    close: () => db.close(),
    file,
  };
}

// ---------------------------------------------------------------------------------------------------
// (c) The disk's raw commit rate: one 1-row INSERT transaction on a WAL database.

function commitSide(mode: SynchronousMode): Side {
  const db = new Database(join(freshDir(), "commit.db"));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${mode}`);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  const tx = db.transaction((i: number) => insert.run(`row ${i}`));
  return { op: (i) => tx.immediate(i), close: () => db.close(), file: "" };
}

// ---------------------------------------------------------------------------------------------------
// The two sides must have written the same rows (timestamps aside), or the comparison means nothing.

function fingerprintRows(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const digest = createHash("sha256");
    for (const sql of [
      "SELECT run_id, status, revision, progress_revision, step_count, cursor_path, cursor_visit FROM runs ORDER BY run_id",
      "SELECT path, visit, node_kind, attempt, status, output_hash, error_code, error_hash, next_path FROM run_steps ORDER BY path, visit",
      "SELECT seq, run_id, revision, type, path, visit, data FROM run_events ORDER BY seq",
      "SELECT hash, media_type, size, content FROM blobs ORDER BY hash",
    ]) {
      for (const row of db.prepare(sql).iterate()) digest.update(JSON.stringify(row));
    }
    return digest.digest("hex");
  } finally {
    db.close();
  }
}

function assertSameRows(what: string, a: Side, b: Side): void {
  if (fingerprintRows(a.file) !== fingerprintRows(b.file)) {
    throw new Error(`${what}: the RunStore and baseline files hold different rows; the baseline is wrong.`);
  }
}

// ---------------------------------------------------------------------------------------------------

type Case = "store-finish" | "raw-finish" | "store-pair" | "raw-pair" | "commit";
const CASES: Record<Case, string> = {
  "store-finish": "(a) RunStore.finishNodeVisit",
  "raw-finish": "(b) better-sqlite3, same rows",
  "store-pair": "(a) RunStore start+finish (2 txns)",
  "raw-pair": "(b) better-sqlite3, same rows (2 txns)",
  commit: "(c) 1-row INSERT txn",
};

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function main(): void {
  const cpu = cpus();
  console.log(
    `store bench: N=${N} (+${WARMUP} warm-up) per case, ${ROUNDS} rounds, sides interleaved in blocks of ${BLOCK}, ` +
      `node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "cpu"}, state dirs under ${root}`,
  );
  const finishTemplate = makeTemplate(TOTAL);
  const pairTemplate = makeTemplate(0);

  const samples = new Map<string, Sample[]>();
  const ratios = new Map<string, number[]>();
  const add = <V>(map: Map<string, V[]>, key: string, value: V) => {
    const list = map.get(key) ?? [];
    list.push(value);
    map.set(key, list);
  };
  const report = (round: number, mode: SynchronousMode, kind: Case, sample: Sample) => {
    add(samples, `${kind} ${mode}`, sample);
    process.stderr.write(
      `round ${round + 1} ${mode.padEnd(6)} ${CASES[kind].padEnd(40)} ${Math.round(sample.opsPerSec)} ops/s\n`,
    );
  };

  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
      const finishSides = [
        storeSide(finishTemplate, mode, "finish"),
        rawSide(finishTemplate, mode, "finish"),
        commitSide(mode),
      ];
      const [sf, rf, c] = measure(finishSides) as [Sample, Sample, Sample];
      const pairSides = [storeSide(pairTemplate, mode, "pair"), rawSide(pairTemplate, mode, "pair")];
      const [sp, rp] = measure(pairSides) as [Sample, Sample];
      if (round === 0) {
        assertSameRows(`finish ${mode}`, finishSides[0] as Side, finishSides[1] as Side);
        assertSameRows(`pair ${mode}`, pairSides[0] as Side, pairSides[1] as Side);
      }
      report(round, mode, "store-finish", sf);
      report(round, mode, "raw-finish", rf);
      report(round, mode, "commit", c);
      report(round, mode, "store-pair", sp);
      report(round, mode, "raw-pair", rp);
      add(ratios, `finish ${mode}`, rf.opsPerSec / sf.opsPerSec);
      add(ratios, `pair ${mode}`, rp.opsPerSec / sp.opsPerSec);
    }
  }

  const fmt = (v: number) => Math.round(v).toLocaleString("en-US");
  console.log(`\nMedians of ${ROUNDS} rounds, ${N} ops each (latency per op; a pair is two commits):\n`);
  console.log("| what | synchronous | ops/s | p50 µs | p99 µs | CPU µs/op |");
  console.log("| --- | --- | ---: | ---: | ---: | ---: |");
  for (const mode of MODES) {
    for (const kind of Object.keys(CASES) as Case[]) {
      const list = samples.get(`${kind} ${mode}`) ?? [];
      const m = (f: (s: Sample) => number) => fmt(median(list.map(f)));
      console.log(
        `| ${CASES[kind]} | ${mode} | ${m((s) => s.opsPerSec)} | ${m((s) => s.p50us)} | ${m((s) => s.p99us)} | ${m((s) => s.cpuUs)} |`,
      );
    }
  }
  console.log("\nRatio (a time per op) / (b time per op), median of the per-round ratios; goal <= 1.5:\n");
  console.log("| op | synchronous | a/b | rounds |");
  console.log("| --- | --- | ---: | --- |");
  for (const op of ["finish", "pair"]) {
    for (const mode of MODES) {
      const list = ratios.get(`${op} ${mode}`) ?? [];
      const m = median(list);
      console.log(
        `| ${op === "finish" ? "finishNodeVisit" : "start+finish"} | ${mode} | ${m.toFixed(2)}${m > 1.5 ? " (over)" : ""} | ${list.map((r) => r.toFixed(2)).join(", ")} |`,
      );
    }
  }
}

try {
  main();
} finally {
  rmSync(root, { recursive: true, force: true });
}
