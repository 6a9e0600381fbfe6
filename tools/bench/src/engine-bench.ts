/**
 * The engine benchmark (`pnpm bench:engine`): a chain of compute nodes executed by `executeRun`
 * (a) on the in-memory port, so only the engine itself is measured, and on the embedded store
 * (EmbeddedRuntime + RunStore, two fenced transactions per node) at (b) synchronous=FULL and
 * (c) synchronous=NORMAL. Figures and their reading live in docs/performance.md ("Engine").
 *
 * Environment: BENCH_NODES (default 1000), BENCH_ROUNDS (default 5), BENCH_WARMUP (untimed rounds
 * first, default 1), BENCH_DIR (parent of the temp state dirs, default the OS temp dir).
 *
 * Run from the repository root: tsx resolves `@piw/engine`, `@piw/embedded`, `@piw/store` and
 * `@piw/protocol` to their `src` through the `paths` of tsconfig.base.json, so no build is needed and the
 * figures are for the current source.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { EmbeddedRuntime } from "@piw/embedded";
import {
  type CompiledWorkflow,
  type ComputeNode,
  compileWorkflow,
  compute,
  defineWorkflow,
  type ExecutionOutcome,
  executeRun,
  type GotoEdge,
  MemoryRunPort,
} from "@piw/engine";
import type { SynchronousMode } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}.`);
  return value;
}

const NODES = envInt("BENCH_NODES", 1000, 1);
const ROUNDS = envInt("BENCH_ROUNDS", 5, 1);
const WARMUP = envInt("BENCH_WARMUP", 1, 0);

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "piw-engine-bench-"));
let dirCount = 0;
function freshDir(): string {
  const dir = join(root, `s${++dirCount}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** n0 -> n1 -> ... -> n<N-1> -> done; every node returns its visit number (always 1). */
function chainWorkflow(size: number): CompiledWorkflow {
  const nodes: Record<string, ComputeNode<unknown, number>> = {};
  const edges: Record<string, GotoEdge> = {};
  for (let i = 0; i < size; i++) {
    nodes[`n${i}`] = compute({ run: ({ node }) => node.visit });
    edges[`n${i}`] = { to: i + 1 < size ? `n${i + 1}` : "done" };
  }
  return compileWorkflow(defineWorkflow({ name: "chain", startAt: "n0", nodes, edges, maxSteps: size + 10 }));
}

function expectCompleted(outcome: ExecutionOutcome, what: string): void {
  if (outcome.kind !== "completed" || outcome.output !== 1) {
    throw new Error(`${what}: expected the chain to complete with output 1, got ${JSON.stringify(outcome)}.`);
  }
}

interface Sample {
  ms: number;
  /** User + system CPU time of this process: what is not spent waiting on the disk. */
  cpuMs: number;
}

/** One side prepares its run untimed, then `execute` is timed from accepting the command to the end. */
interface Side {
  label: string;
  prepare(): { execute(): Promise<ExecutionOutcome>; check(): void; close(): void };
}

function memorySide(workflow: CompiledWorkflow): Side {
  return {
    label: "(a) MemoryRunPort",
    prepare() {
      const port = new MemoryRunPort({ runId: "bench-memory" });
      return {
        // The same acceptance the worker does (`markRunning`), then the run.
        execute: async () => {
          await port.markRunning();
          return executeRun({ workflow, port });
        },
        check() {
          if (port.visits.length !== NODES) throw new Error(`memory: ${port.visits.length} visits saved.`);
        },
        close() {},
      };
    },
  };
}

const SOURCE = { kind: "builtin" as const, id: "chain", revision: "bench" };

function storeSide(workflow: CompiledWorkflow, mode: SynchronousMode): Side {
  return {
    label: `(${mode === "FULL" ? "b" : "c"}) embedded store, ${mode}`,
    prepare() {
      const store = openTunedStore({ stateDir: freshDir(), synchronous: mode });
      // A lease far longer than any run, so the fence never expires mid-measurement.
      const runtime = new EmbeddedRuntime(store, 3_600_000);
      const runId = runtime.reserve({ workflow, source: SOURCE, input: null, runId: `bench-${dirCount}` });
      const activation = runtime.activate(runId);
      return {
        execute: () => runtime.execute(activation, workflow),
        check() {
          const steps = store.listRunSteps(runId);
          if (steps.length !== NODES || steps.some((s) => s.status !== "succeeded")) {
            throw new Error(`store ${mode}: ${steps.length} steps saved, not ${NODES} succeeded.`);
          }
          if (store.getRun(runId)?.status !== "done") throw new Error(`store ${mode}: the run is not done.`);
        },
        close: () => store.close(),
      };
    },
  };
}

async function time(side: Side): Promise<Sample> {
  const run = side.prepare();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcome = await run.execute();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  expectCompleted(outcome, side.label);
  run.check();
  run.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log(
    `engine bench: a chain of ${NODES} compute nodes, ${ROUNDS} rounds (+${WARMUP} warm-up), sides interleaved ` +
      `per round, node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "cpu"}, state dirs under ${root}`,
  );
  const c0 = performance.now();
  const workflow = chainWorkflow(NODES);
  const compileMs = performance.now() - c0;

  const sides = [memorySide(workflow), storeSide(workflow, "FULL"), storeSide(workflow, "NORMAL")];
  const samples = sides.map((): Sample[] => []);
  for (let round = -WARMUP; round < ROUNDS; round++) {
    // Rotate which side goes first, so load from other jobs on a shared machine lands on all alike.
    for (let r = 0; r < sides.length; r++) {
      const s = ((((round % sides.length) + sides.length) % sides.length) + r) % sides.length;
      const side = sides[s] as Side;
      const sample = await time(side);
      if (round < 0) continue;
      samples[s]?.push(sample);
      process.stderr.write(
        `round ${round + 1} ${side.label.padEnd(30)} ${Math.round((NODES * 1000) / sample.ms)} nodes/s\n`,
      );
    }
  }
  rmSync(root, { recursive: true, force: true });

  const fmt = (v: number, digits = 0) =>
    v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const memoryMs = median((samples[0] ?? []).map((s) => s.ms));
  console.log(
    `\nMedians of ${ROUNDS} rounds; one run = ${NODES} node visits, timed from accepting the command to the saved end:\n`,
  );
  console.log("| side | nodes/s | µs/node | CPU µs/node | min–max nodes/s | beyond the engine µs/node |");
  console.log("| --- | ---: | ---: | ---: | --- | ---: |");
  sides.forEach((side, s) => {
    const list = samples[s] ?? [];
    const ms = median(list.map((x) => x.ms));
    const rates = list.map((x) => (NODES * 1000) / x.ms);
    const extra = s === 0 ? "—" : fmt(((ms - memoryMs) * 1000) / NODES, 1);
    console.log(
      `| ${side.label} | ${fmt((NODES * 1000) / ms)} | ${fmt((ms * 1000) / NODES, 1)} | ` +
        `${fmt((median(list.map((x) => x.cpuMs)) * 1000) / NODES, 1)} | ` +
        `${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))} | ${extra} |`,
    );
  });
  console.log(
    `\nEngine overhead per node (in-memory time / ${NODES}): ${fmt((memoryMs * 1000) / NODES, 1)} µs. ` +
      `Compiling the ${NODES}-node definition: ${fmt(compileMs, 1)} ms (once, not in the figures above).`,
  );
}

await main();
