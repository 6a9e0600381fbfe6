import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadWorkflowFile } from "@piw/engine";
import {
  type ClientMethod,
  type ClientParams,
  type ClientResult,
  type clientMethods,
  type JsonValue,
  type KeyedMethod,
  lostReplyPolicy,
  type MethodTable,
  clientMethods as methods,
  clientPushes,
  dispatchPushes,
  RpcPeer,
  type RunView,
} from "@piw/protocol";
import { PREFLIGHT_COMMAND, removeTree, REPO, TSX_LOADER, waitFor, WORKER_COMMAND } from "@piw/test-kit";
import { type RunningHost, type StartHostOptions, startHost } from "../src/index.js";
import { type HostTuning, startTunedHost } from "../src/testing.js";

// A worker's pid as its test wrote it, read only once the whole number is there.
export { pidIn } from "@piw/test-kit";

/** The real worker, from source (tsx's loader by absolute path: workers start in the run's directory). */
export { REPO, TSX_LOADER, WORKER_COMMAND };
/** The real host binary, from source. */
export const HOST_MAIN = join(REPO, "apps/host/src/main.ts");
export const TSX_ENV = { TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json") };

export interface Sandbox {
  dir: string;
  stateDir: string;
  workflows: string;
  cleanup(): void;
}

export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "piw-host-"));
  const workflows = join(dir, "flows");
  return {
    dir,
    stateDir: join(dir, "state"),
    workflows,
    cleanup: () => removeTree(dir),
  };
}

function hostOptions(box: Sandbox, extra: Partial<StartHostOptions> = {}): StartHostOptions {
  return {
    stateDir: box.stateDir,
    workerCommand: WORKER_COMMAND,
    workerEnv: TSX_ENV,
    preflightCommand: PREFLIGHT_COMMAND,
    cancelGraceMs: 500,
    stopGraceMs: 2_000,
    ...extra,
  };
}

/** A host in this process: through the public entry, unless the test turns a bench knob (`tuning`). */
export function start(
  box: Sandbox,
  extra: Partial<StartHostOptions> = {},
  tuning?: HostTuning,
): Promise<RunningHost> {
  const options = hostOptions(box, extra);
  return tuning === undefined ? startHost(options) : startTunedHost(options, tuning);
}

/** Poll the host until the run is terminal; its view then. */
export function finished(client: TestClient, runId: string, timeoutMs = 60_000) {
  return waitFor(
    `run ${runId} to finish`,
    async () => {
      const view = await client.call("runs.get", { runId });
      return view && ["done", "failed", "cancelled"].includes(view.status) ? view : undefined;
    },
    timeoutMs,
  );
}

/** Params as tests write them: a run-creating method's `requestKey` may be left out (each call gets one). */
export type TestParams<M extends ClientMethod> = M extends KeyedMethod
  ? Omit<ClientParams<M>, "requestKey"> & { requestKey?: string }
  : ClientParams<M>;

/** A small client on the protocol's own RpcPeer: the real client package is not a dependency of host. */
export class TestClient {
  readonly views: RunView[] = [];
  private waiters: Array<() => void> = [];
  /** Pushes whose data broke their schema, by name. */
  private readonly invalid: string[] = [];
  private constructor(
    readonly socket: Socket,
    readonly peer: RpcPeer<MethodTable, typeof clientMethods>,
  ) {}

  static async connect(socketPath: string, hello = true): Promise<TestClient> {
    const socket = connect(socketPath);
    await new Promise<void>((res, rej) => {
      socket.once("connect", res);
      socket.once("error", rej);
    });
    socket.setEncoding("utf8");
    const holder: { client?: TestClient } = {};
    const peer = new RpcPeer<MethodTable, typeof clientMethods>({
      send: (line) => socket.write(line),
      remote: methods,
      // Parsed as the real client parses them: a view the schema refuses fails the test that waits on it.
      onPush: dispatchPushes(
        clientPushes,
        { "run.view": ({ view }) => holder.client?.onView(view) },
        (push) => holder.client?.onInvalid(push),
      ),
    });
    socket.on("data", (chunk: string) => peer.feed(chunk));
    socket.on("close", () => peer.close());
    const client = new TestClient(socket, peer);
    holder.client = client;
    if (hello) await client.call("hello", { protocol: 1, client: "test" });
    return client;
  }

  call<M extends keyof typeof clientMethods & string>(
    method: M,
    params?: TestParams<M>,
  ): Promise<ClientResult<M>> {
    const sent =
      lostReplyPolicy[method] === "keyed"
        ? { requestKey: randomBytes(16).toString("hex"), ...params }
        : params;
    return this.peer.call(method, sent as never) as Promise<ClientResult<M>>;
  }

  /** Resolves with the first pushed view of `runId` that satisfies `accept`. */
  async view(runId: string, accept: (view: RunView) => boolean, timeoutMs = 20_000): Promise<RunView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.invalid.length > 0)
        throw new Error(`the host pushed invalid data: ${this.invalid.join(", ")}`);
      const found = this.views.find((v) => v.runId === runId && accept(v));
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        const last = this.views.filter((v) => v.runId === runId).at(-1);
        throw new Error(
          `no matching view of ${runId}; last: ${JSON.stringify(last && { status: last.status, work: last.currentWork, reason: last.recoveryReason, error: last.error })}`,
        );
      }
      await new Promise<void>((res) => {
        const timer = setTimeout(res, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          res();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private onInvalid(push: string): void {
    this.invalid.push(push);
    this.wake();
  }

  private onView(view: RunView): void {
    this.views.push(view);
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Raw socket access for malformed frames: each reply line parsed. */
export async function rawSocket(socketPath: string): Promise<{
  socket: Socket;
  replies: Array<Record<string, unknown>>;
  next(count?: number, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
}> {
  const socket = connect(socketPath);
  await new Promise<void>((res, rej) => {
    socket.once("connect", res);
    socket.once("error", rej);
  });
  socket.setEncoding("utf8");
  const replies: Array<Record<string, unknown>> = [];
  let buffer = "";
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      replies.push(JSON.parse(buffer.slice(0, newline)) as Record<string, unknown>);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
  });
  return {
    socket,
    replies,
    async next(count = 1, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (replies.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      return replies.splice(0, count);
    },
  };
}

/** Write `<name>.workflow.ts` and compile it as the CLI's preflight would. */
export async function writeWorkflow(box: Sandbox, name: string, body: string) {
  mkdirSync(box.workflows, { recursive: true });
  const file = join(box.workflows, `${name}.workflow.ts`);
  writeFileSync(file, body);
  const loaded = await loadWorkflowFile(file);
  return {
    file,
    reserve(
      input: JsonValue,
      origin: ClientParams<"runs.reserve">["origin"] = { kind: "cli" },
    ): TestParams<"runs.reserve"> {
      return {
        workflowName: loaded.name,
        source: loaded.source,
        definitionDigest: loaded.workflow.digest,
        manifest: loaded.workflow.manifest as unknown as JsonValue,
        input,
        origin,
      };
    },
  };
}

/** The user other-user tests act as (`nobody`), root only. */
export const OTHER_UID = 65534;

/**
 * A copy of this Node binary that any user can run. The Node a developer or `.ci/run` uses may sit
 * under a home directory only its owner may enter, where `nobody` cannot execute it.
 */
export function nodeForAnyUser(): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "piw-node-"));
  chmodSync(dir, 0o755);
  const path = join(dir, "node");
  copyFileSync(process.execPath, path);
  chmodSync(path, 0o755);
  return {
    path,
    cleanup: () => removeTree(dir),
  };
}

/** Workflows the tests run. Each compiles with the engine and runs in the real worker. */
export const FLOWS = {
  count: `import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "count",
  title: "Count",
  input: z.object({ n: z.number() }),
  startAt: "one",
  nodes: {
    one: compute({ run: ({ input }) => (input as { n: number }).n + 1 }),
    two: compute({ run: ({ outputs }) => (outputs.one as number) * 2 }),
  },
  edges: { one: { to: "two" }, two: { to: "done" } },
});
`,
  /** `first` saves progress; `hang` waits for a release file (or forever); `after` follows. */
  hang: `import { existsSync } from "node:fs";
import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "hang",
  input: z.object({ release: z.string() }),
  startAt: "first",
  nodes: {
    first: compute({ run: () => "saved" }),
    hang: compute({
      run: async ({ input }) => {
        const { release } = input as { release: string };
        while (!existsSync(release)) await new Promise((r) => setTimeout(r, 25));
        return "released";
      },
    }),
    after: compute({ run: ({ outputs }) => outputs.hang }),
  },
  edges: { first: { to: "hang" }, hang: { to: "after" }, after: { to: "done" } },
});
`,
  /**
   * Kills its own worker once (the marker file remembers): at `first` (no progress) or `second` (after
   * progress). `first` is an action, so `second` starts only once `first` is saved: a pure step runs
   * ahead of its save, and a worker that dies then loses the saves it had not yet sent.
   */
  crash: `import { existsSync, writeFileSync } from "node:fs";
import { action, compute, defineWorkflow } from "piw";
import { z } from "zod";
type Input = { marker: string; at: "first" | "second" };
const dieOnce = (input: Input, here: string) => {
  if (input.at !== here || existsSync(input.marker)) return;
  writeFileSync(input.marker, "died");
  process.kill(process.pid, "SIGKILL");
};
export default defineWorkflow({
  name: "crash",
  input: z.object({ marker: z.string(), at: z.enum(["first", "second"]) }),
  startAt: "first",
  nodes: {
    first: action({ run: ({ input }) => { dieOnce(input as Input, "first"); return 1; } }),
    second: compute({ run: ({ input }) => { dieOnce(input as Input, "second"); return 2; } }),
  },
  edges: { first: { to: "second" }, second: { to: "done" } },
});
`,
};

/** The real `piw-host` binary from source, as a child that tests may kill -9. */
export async function spawnHostBinary(box: Sandbox): Promise<{ child: ChildProcess; stderr(): string }> {
  const child = spawn(process.execPath, ["--import", TSX_LOADER, HOST_MAIN], {
    cwd: REPO,
    env: {
      ...process.env,
      ...TSX_ENV,
      PIW_HOME: box.stateDir,
      PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
      PIW_PREFLIGHT_COMMAND: JSON.stringify(PREFLIGHT_COMMAND),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let text = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  await waitFor("the host binary to serve", () => text.includes("host: serving"), 20_000);
  return { child, stderr: () => text };
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => child.once("exit", () => res()));
}
