/**
 * What the benches that drive real `piw-host` processes share (runtime-bench, commit-bench): the
 * generated chain workflow, reserve parameters, built hosts started and stopped, /proc CPU times,
 * and the number formatting of their tables.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallParams, connectHost, type HostClient } from "@piw/client";
import type { LoadedWorkflow } from "@piw/engine";
import type { JsonValue, RunView } from "@piw/protocol";

export type Mode = "FULL" | "NORMAL";

export function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}.`);
  return value;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const fmt = (v: number, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "—";

/** USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on Linux (`getconf CLK_TCK`). */
const CLK_TCK = 100;

/** CPU ms of a process itself, and of its children that it has waited for. */
export function procCpu(pid: number): { selfMs: number; childrenMs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  const ticks = (i: number) => f[i] ?? 0;
  return {
    selfMs: ((ticks(11) + ticks(12)) * 1000) / CLK_TCK,
    childrenMs: ((ticks(13) + ticks(14)) * 1000) / CLK_TCK,
  };
}

/** A generated `*.workflow.ts`: a chain of `size` compute nodes, each returning its visit number. */
export function writeChainFile(dir: string, name: string, size: number): string {
  const lines = [
    'import { compute, defineWorkflow } from "piw";',
    "",
    "const run = ({ node }: { node: { visit: number } }) => node.visit;",
    "",
    "export default defineWorkflow({",
    `  name: "${name}",`,
    '  startAt: "n0",',
    `  maxSteps: ${size + 10},`,
    "  nodes: {",
  ];
  for (let i = 0; i < size; i++) lines.push(`    n${i}: compute({ run }),`);
  lines.push("  },", "  edges: {");
  for (let i = 0; i < size; i++) lines.push(`    n${i}: { to: "${i + 1 < size ? `n${i + 1}` : "done"}" },`);
  lines.push("  },", "});", "");
  const file = join(dir, `${name}.workflow.ts`);
  writeFileSync(file, lines.join("\n"));
  return file;
}

export type ReserveParams = CallParams<"runs.reserve">;

export function reserveParams(
  loaded: LoadedWorkflow,
  origin: ReserveParams["origin"],
  workingDir: string,
): ReserveParams {
  return {
    workflowName: loaded.name,
    source: loaded.source,
    definitionDigest: loaded.workflow.digest,
    manifest: loaded.workflow.manifest as unknown as JsonValue,
    input: null,
    origin,
    workingDir,
  };
}

export function runIdOf(reply: unknown): string {
  const t = reply as { kind: string; value?: { runId?: string } };
  if (t.kind !== "applied" || typeof t.value?.runId !== "string") {
    throw new Error(`runs.reserve was not applied: ${JSON.stringify(reply).slice(0, 500)}`);
  }
  return t.value.runId;
}

export function checkCompleted(view: RunView | null, nodes: number, what: string): RunView {
  const succeeded = view?.nodes.filter((n) => n.state === "succeeded").length ?? 0;
  if (view?.status !== "done" || view.outcome !== "completed" || succeeded !== nodes) {
    throw new Error(
      `${what}: expected a completed run with ${nodes} succeeded nodes, got status ${view?.status} ` +
        `outcome ${view?.outcome} with ${succeeded} succeeded; error ${JSON.stringify(view?.error)}`,
    );
  }
  return view;
}

export interface Host {
  mode: Mode;
  label: string;
  stateDir: string;
  process: ChildProcess;
  pid: number;
  client: HostClient;
  logFile: string;
}

export interface HostProcessOptions {
  /** The bench's temp dir: the host's state dir and log go in it. */
  root: string;
  /** The checkout whose `apps/host/dist/main.js` runs (with that checkout's built worker). */
  checkout: string;
  mode: Mode;
  label?: string;
  /** More environment for the host (and so its workers). */
  env?: Record<string, string>;
}

/** A built `piw-host` process with its own state dir, and a client connected to it. */
export async function startHostProcess(options: HostProcessOptions): Promise<Host> {
  const { root, checkout, mode } = options;
  const label = options.label ?? mode;
  const name = `host-${label.toLowerCase().replace(/\W+/g, "-")}`;
  const stateDir = join(root, name);
  const logFile = join(root, `${name}.log`);
  const hostMain = join(checkout, "apps/host/dist/main.js");
  const fd = openSync(logFile, "a");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    PIW_HOME: stateDir,
    PIW_SYNCHRONOUS: mode,
  };
  delete env.PIW_WORKER_COMMAND; // the host's default: the built worker of this checkout
  const child = spawn(process.execPath, [hostMain], { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${hostMain}`);
  const deadline = Date.now() + 15_000;
  for (;;) {
    let client: HostClient | undefined;
    try {
      client = await connectHost({ stateDir, client: "test", autoStart: false });
      const status = await client.call("host.status");
      if (status.synchronous !== mode || status.pid !== child.pid) {
        throw new Error(`host ${status.pid} runs ${status.synchronous}, expected ${child.pid} at ${mode}`);
      }
      return { mode, label, stateDir, process: child, pid: child.pid, client, logFile };
    } catch (error) {
      client?.close();
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the ${label} host did not come up: ${String(error)}\n${tail(logFile)}`);
      }
      await sleep(50);
    }
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-20).join("\n");
  } catch {
    return "";
  }
}

export async function stopHostProcess(host: Host): Promise<void> {
  host.client.close();
  if (host.process.exitCode !== null) return;
  const exited = new Promise<void>((done) => host.process.once("exit", () => done()));
  host.process.kill("SIGTERM");
  await Promise.race([exited, sleep(8_000)]);
  if (host.process.exitCode === null) host.process.kill("SIGKILL");
}
