import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadWorkflowFile } from "@piw/engine";
import { type LoneWorkerChannelOptions, loneWorkerChannel, type WorkerPeer } from "@piw/host/testing";
import type {
  Fence,
  Handlers,
  JsonValue,
  RunCommand,
  SourceIdentity,
  Transition,
  WorkerExit,
  workerMethods,
} from "@piw/protocol";
import { RunStore } from "@piw/store";
import { removeTree, REPO, WORKER_COMMAND } from "@piw/test-kit";

/** `PIW_WORKER_COMMAND` (a JSON argv, as the host reads it) runs these tests against another build, e.g. dist. */
function workerCommand(): [string, ...string[]] {
  const override = process.env.PIW_WORKER_COMMAND;
  const [file, ...args]: string[] = override ? JSON.parse(override) : WORKER_COMMAND;
  if (file === undefined) throw new Error("PIW_WORKER_COMMAND is an empty argv");
  return [file, ...args];
}

export interface SpawnedWorker {
  child: ChildProcessWithoutNullStreams;
  peer: WorkerPeer;
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
 * worker process, and the host's own worker handlers (`loneWorkerChannel`) over its stdio, wrapped only
 * to record calls and to inject the faults a test asks for.
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
    const calls: string[] = [];
    // The channel closes before `exited` settles, as the host closes a gone worker's channel first.
    let closeChannel = () => {};
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((done) => {
      child.on("exit", (code, signal) => {
        closeChannel();
        done({ code, signal, at: Date.now() });
      });
    });
    const workerProcess: LoneWorkerChannelOptions["process"] = {
      pid: child.pid ?? null,
      send: (line) => {
        if (child.stdin.writable) child.stdin.write(line);
      },
      closeChannel: () => child.stdin.end(),
      kill: () => child.kill("SIGKILL"),
      gone: exited.then(() => {}),
    };
    const live = loneWorkerChannel({
      store: this.store,
      launchId,
      command,
      process: workerProcess,
      wrap: (handlers) =>
        recording(calls, {
          ...handlers,
          "worker.hello": async (hello) => {
            const reply = await handlers["worker.hello"](hello);
            return options.command ? { ...reply, command: options.command(reply.command) } : reply;
          },
          "worker.exit": (exit) => {
            reports.push(exit);
            return handlers["worker.exit"](exit);
          },
        }),
    });
    const peer = live.peer;
    closeChannel = () => peer.close();
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
    removeTree(this.dir);
  }
}

export function expectSaved<T>(t: Transition<T>): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value;
  throw new Error(`expected a saved transition, got ${JSON.stringify(t)}`);
}

/** The handlers as given, each first noting its method in `calls`, in the order requests arrive. */
function recording(
  calls: string[],
  handlers: Handlers<typeof workerMethods>,
): Handlers<typeof workerMethods> {
  return Object.fromEntries(
    Object.entries(handlers).map(([method, handler]) => [
      method,
      (params: never) => {
        calls.push(method);
        return (handler as (p: never) => unknown)(params);
      },
    ]),
  ) as Handlers<typeof workerMethods>;
}
