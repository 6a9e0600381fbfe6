import { spawn } from "node:child_process";

export interface ShellRequest {
  command: { argv: string[] } | { shell: string };
  cwd?: string;
  /** What the command's environment starts from (the run's); default this process's. */
  baseEnv?: Readonly<Record<string, string>>;
  /** Added to the base (a node's `env`). */
  env?: Record<string, string>;
  timeoutMs?: number;
  signal: AbortSignal;
  maxOutputBytes?: number;
  /** How many bytes of the end of stderr to keep. */
  maxStderrTailBytes?: number;
  /** The command's process group, told when it starts (`alive`) and when its leader has exited. */
  onProcessGroup?: (pgid: number, alive: boolean) => void;
}

export interface ShellResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stdoutTruncated: boolean;
  /** The last bytes of stderr, at most `maxStderrTailBytes`. */
  stderrTail: string;
  timedOut: boolean;
  aborted: boolean;
}

const DEFAULT_MAX_SHELL_OUTPUT = 1024 * 1024;
const DEFAULT_STDERR_TAIL_BYTES = 8 * 1024;

/** Keeps only the last `max` bytes of a stream: a failing command's last words say what went wrong. */
function tailOf(stream: NodeJS.ReadableStream, max: number): () => string {
  let tail = Buffer.alloc(0);
  stream.on("data", (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]);
    if (tail.byteLength > max) tail = tail.subarray(tail.byteLength - max);
  });
  // A cut through a multi-byte character decodes as U+FFFD; drop it rather than show it.
  return () => tail.toString("utf8").replace(/^\uFFFD+/, "");
}

/** Kill the whole process group: a shell's grandchildren must not outlive a cancelled node. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

/** Run one runtime-owned command with bounded output; never throws for the command's own failure. */
export function runShell(req: ShellRequest): Promise<ShellResult> {
  const max = req.maxOutputBytes ?? DEFAULT_MAX_SHELL_OUTPUT;
  const [file, args, useShell] =
    "argv" in req.command
      ? [req.command.argv[0] ?? "", req.command.argv.slice(1), false]
      : [req.command.shell, [] as string[], true];
  return new Promise((resolve, reject) => {
    if (req.signal.aborted) {
      resolve({
        exitCode: null,
        signal: null,
        stdout: "",
        stdoutTruncated: false,
        stderrTail: "",
        timedOut: false,
        aborted: true,
      });
      return;
    }
    const child = spawn(file, args, {
      cwd: req.cwd,
      env: { ...(req.baseEnv ?? process.env), ...req.env },
      shell: useShell,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Detached: the command leads its own process group, whose id is its pid.
    const pgid = child.pid;
    if (pgid !== undefined) req.onProcessGroup?.(pgid, true);
    const stderrTail = tailOf(child.stderr, req.maxStderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES);
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let timedOut = false;
    let aborted = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (size >= max) {
        truncated = true;
        return;
      }
      const room = max - size;
      const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
      if (part !== chunk) truncated = true;
      chunks.push(part);
      size += part.byteLength;
    });
    const onAbort = () => {
      aborted = true;
      killGroup(child.pid);
    };
    req.signal.addEventListener("abort", onAbort, { once: true });
    const timer =
      req.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            killGroup(child.pid);
          }, req.timeoutMs);
    child.on("error", (error) => {
      if (timer) clearTimeout(timer);
      req.signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("close", (exitCode, signal) => {
      if (pgid !== undefined) req.onProcessGroup?.(pgid, false);
      if (timer) clearTimeout(timer);
      req.signal.removeEventListener("abort", onAbort);
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(chunks).toString("utf8"),
        stdoutTruncated: truncated,
        stderrTail: stderrTail(),
        timedOut,
        aborted,
      });
    });
  });
}
