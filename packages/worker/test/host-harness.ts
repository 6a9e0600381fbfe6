import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadWorkflowFile } from "@piw/engine";
import {
  type Fence,
  type Handlers,
  type JsonValue,
  type MethodTable,
  RpcPeer,
  type RunCommand,
  type SourceIdentity,
  type Transition,
  type WorkerExit,
  workerMethods,
  type workerPushes,
} from "@piw/protocol";
import { isProcessAlive } from "@piw/state-dir";
import { RunStore } from "@piw/store";

const REPO = resolve(import.meta.dirname, "../../..");
/** The worker's process entry, run from source: no build needed. */
const WORKER_MAIN = join(REPO, "apps/worker/src/main.ts");
const TSX_LOADER = join(REPO, "node_modules/tsx/dist/loader.mjs");

/** `PIW_WORKER_COMMAND` (a JSON argv, as the host reads it) runs these tests against another build, e.g. dist. */
function workerCommand(): [string, ...string[]] {
  const override = process.env.PIW_WORKER_COMMAND;
  return override ? JSON.parse(override) : [process.execPath, "--import", TSX_LOADER, WORKER_MAIN];
}

export interface SpawnedWorker {
  child: ChildProcessWithoutNullStreams;
  peer: RpcPeer<typeof workerMethods, MethodTable, typeof workerPushes>;
  launchId: string;
  fence: Fence;
  /** Exit reports the worker sent, in order. */
  reports: WorkerExit[];
  /** The methods the worker called, in the order they arrived. */
  calls: string[];
  /** Bytes the worker wrote to stdout (frames) after `markStdout()`. */
  stdoutSinceMark(): number;
  markStdout(): void;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

export interface LaunchOptions {
  env?: Record<string, string>;
  /** Replace the command the host hands over in its reply to `worker.hello`. */
  command?: (claimed: RunCommand) => RunCommand;
  /** Claim it as a person's resume (`piw resume`), which may accept a changed workflow file. */
  resume?: { acceptChanges?: true };
}

/**
 * The host's side of the worker channel, played by the test: a real RunStore in a temp folder, a real
 * worker process, and an RpcPeer over its stdio whose handlers are the store's fenced transitions.
 */
export class TestHost {
  readonly dir = mkdtempSync(join(tmpdir(), "piw-worker-test-"));
  readonly store = RunStore.open({ stateDir: join(this.dir, "state") });
  private readonly workers: SpawnedWorker[] = [];

  path(name: string): string {
    return join(this.dir, name);
  }

  /** Write a workflow file outside the repo; it imports the authoring API from "piw". */
  writeWorkflow(name: string, body: string): string {
    const file = this.path(`${name}.workflow.ts`);
    writeFileSync(file, body);
    return file;
  }

  /** Preflight and reserve a run the way the host does: compile, then commit it queued. */
  async prepare(
    file: string,
    input: JsonValue,
    overrides: { source?: SourceIdentity; definitionDigest?: string } = {},
  ): Promise<string> {
    const loaded = await loadWorkflowFile(file);
    const runId = `${loaded.name}-${randomUUID().slice(0, 8)}`;
    const reserved = this.store.reservePreparedRun({
      runId,
      workflowName: loaded.name,
      source: overrides.source ?? loaded.source,
      definitionDigest: overrides.definitionDigest ?? loaded.workflow.digest,
      manifest: loaded.workflow.manifest as unknown as JsonValue,
      input,
      origin: { kind: "cli" },
    });
    expectSaved(reserved);
    return runId;
  }

  /** Claim the run, record the launch and spawn a worker for it. */
  launch(runId: string, options: LaunchOptions = {}): SpawnedWorker {
    const claim = expectSaved(
      this.store.claimRun({
        runId,
        claimToken: `claim-${randomUUID()}`,
        leaseMs: 60_000,
        ...(options.resume ? { resume: true as const, ...options.resume } : {}),
      }),
    );
    const { command } = claim;
    const fence: Fence = { runId, generation: command.generation, claimToken: command.claimToken };
    const launchId = `launch-${randomUUID()}`;
    expectSaved(this.store.recordWorkerLaunch(fence, { launchId, commandType: command.type, pid: null }));

    const [file, ...args] = workerCommand();
    const child = spawn(file, args, {
      cwd: REPO,
      env: { ...process.env, PIW_HOME: join(this.dir, "state"), PIW_LAUNCH_ID: launchId, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const reports: WorkerExit[] = [];
    const store = this.store;
    const handlers: Handlers<typeof workerMethods> = {
      "worker.hello": ({ launchId: said }) => {
        if (said !== launchId) throw new Error("unknown launch");
        const run = store.getRun(runId);
        if (!run) throw new Error("no run");
        return {
          command: options.command ? options.command(command) : command,
          run,
          snapshot: store.readRunSnapshot(runId),
        };
      },
      "run.markRunning": () => store.markRunning(fence),
      "visit.start": (req) => store.startNodeVisit(fence, req),
      "visit.finish": (req) => store.finishNodeVisit(fence, req),
      "visit.advance": (req) => store.advanceNodeVisit(fence, req),
      "effect.reserve": (req) => store.reserveEffect(fence, req),
      "effect.settle": (req) => store.settleEffect(fence, req),
      "message.enqueue": (req) => store.enqueueMessage(fence, req),
      "run.finish": (ending) => store.finishRun(fence, ending),
      "run.park": (reason) => store.parkRun(fence, reason),
      "visit.schedule": (reason) => store.scheduleVisit(fence, reason),
      "run.redefine": (req) => store.redefineRun(fence, req),
      "agent.next": () => new Promise(() => {}),
      "agent.verdict": () => ({ ok: true as const }),
      "agent.progress": () => ({ ok: true as const }),
      "node.progress": (report) => ({ saved: store.saveNodeProgress(fence, report).kind === "applied" }),
      "worker.processGroup": () => ({ ok: true as const }),
      "worker.exit": (exit) => {
        reports.push(exit);
        expectSaved(store.recordWorkerExit({ launchId, exit }));
        return { ok: true as const };
      },
    };
    const calls: string[] = [];
    const recorded = Object.fromEntries(
      Object.entries(handlers).map(([method, handler]) => [
        method,
        (params: never) => {
          calls.push(method);
          return (handler as (p: never) => unknown)(params);
        },
      ]),
    ) as typeof handlers;
    const peer = new RpcPeer<typeof workerMethods, MethodTable, typeof workerPushes>({
      send: (line) => {
        if (child.stdin.writable) child.stdin.write(line);
      },
      local: { methods: workerMethods, handlers: recorded },
    });
    let stdoutBytes = 0;
    let mark = 0;
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdoutBytes += Buffer.byteLength(chunk);
      peer.feed(chunk);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdin.on("error", () => {});
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((done) => {
      child.on("exit", (code, signal) => {
        peer.close();
        done({ code, signal, at: Date.now() });
      });
    });
    const worker: SpawnedWorker = {
      child,
      peer,
      launchId,
      fence,
      reports,
      calls,
      stdoutSinceMark: () => stdoutBytes - mark,
      markStdout: () => {
        mark = stdoutBytes;
      },
      stderr: () => stderr,
      exited,
    };
    this.workers.push(worker);
    return worker;
  }

  /** What the host does when a worker vanished without a report: the store applies the progress rule. */
  recordLost(worker: SpawnedWorker) {
    return expectSaved(
      this.store.recordWorkerExit({ launchId: worker.launchId, exit: { kind: "lost", detail: "killed" } }),
    );
  }

  async cleanup(): Promise<void> {
    for (const worker of this.workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    }
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

export function expectSaved<T>(t: Transition<T>): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value;
  throw new Error(`expected a saved transition, got ${JSON.stringify(t)}`);
}

/** Poll until `check` holds; fails after `ms`. */
export async function waitFor(check: () => boolean, ms = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A process counts as gone once it no longer exists or is only a zombie nobody has reaped yet. */
export function isAlive(pid: number): boolean {
  return isProcessAlive(pid);
}

export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}
