import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type JsonValue, type RunStatus, type RunView, runOutcome } from "@piw/protocol";
import { type RunReader, RunStore } from "@piw/store";
import { lines, waitFor } from "@piw/test-kit";
import {
  HOST_MAIN,
  REPO,
  type Sandbox,
  TestClient,
  TSX_ENV,
  TSX_LOADER,
  WORKER_COMMAND,
} from "../host-fixture.js";

const CLI_MAIN = join(REPO, "apps/piw/src/main.ts");

export class HostProcess {
  private text = "";
  private constructor(
    readonly child: ChildProcess,
    readonly box: Sandbox,
  ) {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.text += chunk;
    });
  }

  /**
   * Start it on the sandbox's state folder. `env` is added to the host's environment, which its workers
   * inherit (the host passes its own environment on to every worker it spawns).
   */
  static async start(box: Sandbox, env: Record<string, string> = {}): Promise<HostProcess> {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, HOST_MAIN], {
      cwd: REPO,
      env: {
        ...process.env,
        ...TSX_ENV,
        PIW_HOME: box.stateDir,
        PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
        ...env,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const host = new HostProcess(child, box);
    await waitFor(
      "the host binary to serve",
      () => host.log().includes("host: serving") || host.exited(),
      30_000,
    );
    if (host.exited()) throw new Error(`the host binary exited at start:\n${host.log()}`);
    return host;
  }

  get socketPath(): string {
    return join(this.box.stateDir, "host.sock");
  }

  log(): string {
    return this.text;
  }

  exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** How many workers this host process launched for `runId` (its own log lines). */
  launches(runId: string): number {
    return this.text.split("\n").filter((line) => line.includes(`run ${runId}: launched worker`)).length;
  }

  async connect(): Promise<TestClient> {
    const client = await TestClient.connect(this.socketPath);
    await client.call("runs.subscribe", {});
    return client;
  }

  /** `kill -9`: no shutdown, no cleanup; the lock and socket stay behind for the next host. */
  async kill9(): Promise<void> {
    if (!this.exited()) this.child.kill("SIGKILL");
    await this.gone();
  }

  /** A graceful stop (SIGTERM): workers' channels close and the store is closed cleanly. */
  async stop(): Promise<void> {
    if (!this.exited()) this.child.kill("SIGTERM");
    await this.gone();
  }

  private gone(): Promise<void> {
    if (this.exited()) return Promise.resolve();
    return new Promise((resolve) => this.child.once("exit", () => resolve()));
  }
}

/** Read the state a stopped host left, through the store's own readers. */
export function readState<T>(box: Sandbox, read: (store: RunStore) => T): T {
  const store = RunStore.open({ stateDir: box.stateDir });
  try {
    return read(store);
  } finally {
    store.close();
  }
}

/** Event types of a run, in commit order. */
export function eventTypes(store: Pick<RunReader, "listRunEvents">, runId: string): string[] {
  return store.listRunEvents(runId, 0, 10_000).map((e) => e.type);
}

/** The reasons of every `run.parked` event of a run, in order. */
export function parkReasons(store: RunStore, runId: string): JsonValue[] {
  return store
    .listRunEvents(runId, 0, 10_000)
    .filter((e) => e.type === "run.parked")
    .map((e) => (e.data as { reason?: JsonValue } | null)?.reason ?? null);
}

export function launchCount(store: RunStore, runId: string): number {
  return store.listRunEvents(runId, 0, 10_000).filter((e) => e.type === "worker.launched").length;
}

/** Where a run came to rest after a fault, as the store saved it and the side-effect log counted it. */
export interface Outcome {
  status: RunStatus;
  /** The recovery reason's code of a parked run, the error code of a failed one, else the outcome. */
  why: string | null;
  /** Lines the effects' side effects appended: how often they really ran. */
  sideEffects: number;
  launches: number;
  /** Why the run was parked on the way, in order (`worker_lost` is followed by a relaunch). */
  parks: string[];
  /** Status of each effect row; a row is one effect identity. */
  effects: string[];
}

export function outcomeOf(store: RunStore, runId: string, log: string): Outcome {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  const why =
    run.status === "parked"
      ? run.recoveryReason.code
      : run.status === "failed"
        ? run.errorCode
        : runOutcome(run);
  return {
    status: run.status,
    why,
    sideEffects: lines(log).length,
    launches: launchCount(store, runId),
    parks: parkReasons(store, runId).map(String),
    effects: store.listRunEffects(runId).map((e) => e.status),
  };
}

/** Each effect identity is reserved once, however often its side effect ran; settled at most once. */
export function effectEventCounts(store: RunStore, runId: string): { reserved: number; settled: number } {
  const types = eventTypes(store, runId);
  return {
    reserved: types.filter((t) => t === "effect.reserved").length,
    settled: types.filter((t) => t === "effect.settled").length,
  };
}

/**
 * A run has settled when nothing will move it without a person: it is terminal, or parked for a reason
 * other than `worker_lost` (the one park the host follows with a relaunch).
 */
function settled(view: RunView): boolean {
  if (view.status === "done" || view.status === "failed" || view.status === "cancelled") return true;
  return view.status === "parked" && view.recoveryReason?.code !== "worker_lost";
}

/** Resolves with the run's first settled view, pushed or (after a reconnect) read. */
export async function settledView(client: TestClient, runId: string, timeoutMs = 45_000): Promise<RunView> {
  const now = await client.call("runs.get", { runId });
  if (now && settled(now) && now.currentWork.kind === "none") return now;
  return client.view(runId, (v) => settled(v) && v.currentWork.kind === "none", timeoutMs);
}

/** Resolves once no worker is alive under the host. */
export async function idle(client: TestClient, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    "the host's workers to exit",
    async () => (await client.call("host.status", {})).workers.length === 0,
    timeoutMs,
  );
}

/**
 * The real `piw` CLI from source, against the host of `box`; it starts one (detached, with this
 * environment plus `env`) when none is running. `atTerminal` gives it a controlling terminal (a
 * pseudo-terminal from util-linux `script`, as a person's), which `piw answer` needs; its stdout and
 * stderr are then files in the sandbox, so the output is the same.
 */
export async function piw(
  box: Sandbox,
  args: string[],
  env: Record<string, string> = {},
  atTerminal = false,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const argv = [process.execPath, "--import", TSX_LOADER, CLI_MAIN, ...args];
  const [out, err] = [join(box.dir, "piw-stdout"), join(box.dir, "piw-stderr")];
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  // `exec`: the CLI replaces the shell `script` runs it with, so its exit code is the CLI's (`-e`).
  const command = `exec ${argv.map(quote).join(" ")} >${quote(out)} 2>${quote(err)}`;
  const [file, ...rest] = atTerminal ? ["script", "-qec", command, "/dev/null"] : argv;
  const child = spawn(file as string, rest, {
    cwd: REPO,
    env: {
      ...process.env,
      ...TSX_ENV,
      PIW_HOME: box.stateDir,
      PIW_HOST_COMMAND: JSON.stringify([process.execPath, "--import", TSX_LOADER, HOST_MAIN]),
      PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
      NO_COLOR: "1",
      ...(atTerminal ? { SHELL: "/bin/sh" } : {}),
      ...env,
    },
    stdio: [atTerminal ? "pipe" : "ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (!atTerminal) return { code, stdout, stderr };
  return { code, stdout: readFileSync(out, "utf8"), stderr: readFileSync(err, "utf8") };
}

/**
 * The fault tests' workflow: `prepare` (compute) routes by the input's mode to `deploy` (an action with
 * an idempotent effect) or `announce` (an action with a manual effect); both lead to `report`
 * (compute). Each effect's side effect appends one line to the input's `log` file, which the test counts.
 */
export const EFFECTS_FLOW = `import { appendFileSync } from "node:fs";
import { type ActionContext, action, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { mode: "idempotent" | "manual"; log: string };

export default defineWorkflow({
  name: "effects",
  input: z.object({ mode: z.enum(["idempotent", "manual"]), log: z.string() }),
  startAt: "prepare",
  nodes: {
    prepare: compute({ run: ({ input }: NodeContext<Input>) => input.mode }),
    deploy: action({
      run: ({ input, effects }: ActionContext<Input>) =>
        effects.idempotent("deploy.append", { line: "deploy" }, () => {
          appendFileSync(input.log, "deploy\\n");
          return { deployed: true };
        }),
    }),
    announce: action({
      run: ({ input, effects }: ActionContext<Input>) =>
        effects.manual("announce.append", { line: "announce" }, () => {
          appendFileSync(input.log, "announce\\n");
          return { announced: true };
        }),
    }),
    report: compute({ run: ({ outputs }) => outputs.deploy ?? outputs.announce }),
  },
  edges: {
    prepare: { to: ["deploy", "announce"], route: (mode) => (mode === "manual" ? "announce" : "deploy") },
    deploy: { to: "report" },
    announce: { to: "report" },
    report: { to: "done" },
  },
});
`;

export type EffectMode = "idempotent" | "manual";
