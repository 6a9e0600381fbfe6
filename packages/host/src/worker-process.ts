import { type ChildProcess, spawn } from "node:child_process";
import { frameBatch } from "@piw/protocol";
import { killProcessGroups } from "./process-groups.js";

export interface WorkerProcessOptions {
  command: string[];
  env: Record<string, string>;
  /** Where the process starts (the state dir): an assigned worker moves into its run's directory. */
  cwd: string;
  /** Each line the worker writes to stderr, for the host log. */
  onStderrLine(line: string): void;
  /** Raw text from the worker's stdout: its protocol frames. */
  onStdout(chunk: string): void;
  /** Called once when the process is gone (exited, or never started); `how` says which. */
  onGone(how: string): void;
}

/** A spawned worker: its own process group, so a kill also takes the shell commands it started. */
export interface WorkerProcess {
  readonly pid: number | null;
  send(line: string): void;
  /** Close the worker's channel: the worker exits when its stdin ends. */
  closeChannel(): void;
  kill(): void;
  readonly gone: Promise<void>;
}

const MAX_STDERR_LINE = 2000;

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `the worker process was killed by ${signal}`;
  return `the worker process exited with code ${code ?? "unknown"}`;
}

export function spawnWorker(options: WorkerProcessOptions): WorkerProcess {
  const [file, ...args] = options.command;
  if (!file) throw new Error("The worker command is empty.");
  let child: ChildProcess;
  let gone = false;
  let markGone: () => void = () => {};
  const gonePromise = new Promise<void>((resolve) => {
    markGone = resolve;
  });
  const finish = (how: string) => {
    if (gone) return;
    gone = true;
    options.onGone(how);
    markGone();
  };
  try {
    child = spawn(file, args, {
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      env: options.env,
      cwd: options.cwd,
    });
  } catch {
    queueMicrotask(() => finish("the worker process could not be started"));
    return { pid: null, send() {}, closeChannel() {}, kill() {}, gone: gonePromise };
  }
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => options.onStdout(chunk));
  let stderrBuffer = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderrBuffer += chunk;
    let newline = stderrBuffer.indexOf("\n");
    while (newline >= 0) {
      const line = stderrBuffer.slice(0, newline);
      stderrBuffer = stderrBuffer.slice(newline + 1);
      if (line.trim()) options.onStderrLine(line.slice(0, MAX_STDERR_LINE));
      newline = stderrBuffer.indexOf("\n");
    }
    if (stderrBuffer.length > MAX_STDERR_LINE) stderrBuffer = stderrBuffer.slice(-MAX_STDERR_LINE);
  });
  // A worker that died closes its pipes; writes to it must not take the host down.
  child.stdin?.on("error", () => {});
  child.stdout?.on("error", () => {});
  child.stderr?.on("error", () => {});
  child.on("error", () => {
    if (child.pid === undefined) finish("the worker process could not be started");
  });
  // `close` comes after stdout ended, so every frame the worker wrote was handled before the exit is judged.
  child.on("close", (code, signal) => finish(describeExit(code, signal)));
  const pid = child.pid ?? null;
  // The replies to one group commit, and the frames of one turn, leave in one write.
  const frames = frameBatch((text) => {
    if (!gone && child.stdin?.writable) child.stdin.write(text);
  });
  return {
    pid,
    send: (line) => frames.send(line),
    closeChannel() {
      frames.flush();
      child.stdin?.end();
    },
    kill() {
      if (gone || pid === null) return;
      if (killProcessGroups([pid]).length > 0) return;
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
    gone: gonePromise,
  };
}
