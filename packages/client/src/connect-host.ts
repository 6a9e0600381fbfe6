import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { homedir } from "node:os";
import { RpcError } from "@piw/protocol";
import {
  defaultStateDir,
  hostLockPath,
  hostSocketPath,
  lockOwnerAlive,
  PIW_ENV,
  readHostLock,
} from "@piw/state-dir";
import { type ClientKind, HostClient } from "./host-client.js";
import { HostUnavailable } from "./host-unavailable.js";

export interface ConnectOptions {
  /** The host's state folder; default `defaultStateDir()`. */
  stateDir?: string;
  /** Start a host when none answers. Default: true when `hostCommand` is given. */
  autoStart?: boolean;
  /**
   * argv that starts the host, e.g. `[process.execPath, ".../apps/host/dist/main.js"]`. The caller
   * supplies it because a package may not depend on an app.
   */
  hostCommand?: readonly string[];
  client: ClientKind;
  /** The extension's Pi SDK folder, told to the host in `hello` (see the protocol's `hello`). */
  piSdk?: string;
  /** Told to the host in `hello`: this client is about to launch a run (see the protocol's `hello`). */
  launching?: boolean;
  /** How long to wait for a host that was just started; default 5 s. */
  timeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 5_000;
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;

/**
 * Socket errors that mean "no host is listening": worth starting one, or waiting for it. A host
 * killed a moment ago may still hold its socket open while its last threads exit (its pid already a
 * zombie): the connection is queued, then reset (ECONNRESET, or EPIPE on our first write).
 */
const NO_HOST_CODES = new Set(["ENOENT", "ECONNREFUSED", "ECONNRESET", "EPIPE"]);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function noHostListening(error: unknown): boolean {
  if (error instanceof HostUnavailable) return error.reason === "disconnected";
  return NO_HOST_CODES.has(errorCode(error) ?? "");
}

function describe(error: unknown): string {
  const code = errorCode(error);
  if (code === "ENOENT") return "no host is running";
  if (code === "ECONNREFUSED") return "no host is listening on it";
  if (code === "ECONNRESET" || code === "EPIPE") return "the host went away while connecting";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return error instanceof Error ? error.message.split("\n")[0] || "unknown error" : String(error);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A started host process, watched until it answers or exits. */
interface StartedHost {
  /** Set once the process failed to spawn or exited non-zero, with the host's own reason when it gave one. */
  failure: string | undefined;
  /** It exited 0: another host held the lock when it looked (running, starting or stopping). */
  yielded: boolean;
}

/** The host writes why it refused to start to this descriptor (`PIW_HOST_REPORT_FD`), and closes it once it serves. */
const REPORT_FD = 3;
const MAX_REPORT_BYTES = 2_048;
/** How long an exited host's last words may take to arrive after its exit. */
const REPORT_GRACE_MS = 250;
/** How often a client starts a host again after each one yielded to a lock holder that then died. */
const MAX_STARTS = 5;

/**
 * Start a host detached, so it outlives this process. Two clients may do this at once: the host's
 * lock lets exactly one of them run, and the other exits 0 ("already running").
 */
function startHost(command: readonly string[], stateDir: string): StartedHost {
  const started: StartedHost = { failure: undefined, yielded: false };
  const [file, ...args] = command;
  if (file === undefined) {
    started.failure = "the host command is empty";
    return started;
  }
  const child = spawn(file, args, {
    detached: true,
    stdio: ["ignore", "ignore", "ignore", "pipe"],
    // Not the caller's folder: a long-lived host should not pin a project directory.
    cwd: homedir(),
    env: { ...process.env, [PIW_ENV.home.name]: stateDir, [PIW_ENV.hostReportFd.name]: String(REPORT_FD) },
  });
  let report = "";
  const reportStream = child.stdio[REPORT_FD] as Socket | null;
  const reportEnded = new Promise<void>((resolve) => {
    if (reportStream === null) return resolve();
    reportStream.setEncoding("utf8");
    reportStream.on("data", (chunk: string) => {
      if (report.length < MAX_REPORT_BYTES) report += chunk.slice(0, MAX_REPORT_BYTES - report.length);
    });
    reportStream.once("error", () => resolve());
    reportStream.once("close", () => resolve());
    reportStream.unref();
  });
  child.once("error", (error) => {
    started.failure = `could not run ${file}: ${describe(error)}`;
  });
  child.once("exit", (code, signal) => {
    if (code === 0) {
      started.yielded = true;
      reportStream?.destroy();
      return;
    }
    const grace = sleep(REPORT_GRACE_MS);
    void Promise.race([reportEnded, grace]).then(() => {
      reportStream?.destroy();
      const reason = report.trim().split("\n").at(-1)?.trim();
      started.failure = reason
        ? `the host refused to start: ${reason}`
        : `the host exited with ${signal ?? `code ${code}`} before it answered`;
    });
  });
  child.unref();
  return started;
}

/**
 * Whether a host that yielded was right to: the lock's holder still runs. When it has died since
 * (a host that was stopping, a zombie of a killed one), a new start will take the lock.
 */
function lockHolderRuns(stateDir: string): { runs: boolean; pid: number | undefined } {
  try {
    const held = readHostLock(hostLockPath(stateDir));
    if (held === null || held.owner === null) return { runs: false, pid: undefined };
    return { runs: lockOwnerAlive(held.owner), pid: held.owner.pid };
  } catch {
    // A lock piw may not use: the host we start next will say why.
    return { runs: false, pid: undefined };
  }
}

/**
 * Connect to the host of `stateDir` and say hello. When no host answers and auto-start is on, start
 * one and keep connecting with backoff until it answers or `timeoutMs` passes.
 * Rejects with HostUnavailable, or with RpcError when the host refuses the handshake.
 */
export async function connectHost(options: ConnectOptions): Promise<HostClient> {
  const stateDir = options.stateDir ?? defaultStateDir();
  const socketPath = hostSocketPath(stateDir);
  const timeoutMs = options.timeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const open = () =>
    HostClient.open(socketPath, {
      client: options.client,
      timeoutMs,
      ...(options.piSdk === undefined ? {} : { piSdk: options.piSdk }),
      ...(options.launching === true ? { launching: true } : {}),
    });

  let lastError: unknown;
  try {
    return await open();
  } catch (error) {
    if (error instanceof RpcError || !noHostListening(error)) throw unavailable(socketPath, error);
    lastError = error;
  }
  const autoStart = options.autoStart ?? options.hostCommand !== undefined;
  if (!autoStart) throw new HostUnavailable(socketPath, "not_running", describe(lastError));
  if (options.hostCommand === undefined) {
    throw new HostUnavailable(socketPath, "not_running", "no host is running and no command to start one");
  }

  let started = startHost(options.hostCommand, stateDir);
  let starts = 1;
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_RETRY_MS;
  for (;;) {
    await sleep(Math.max(0, Math.min(delay, deadline - Date.now())));
    delay = Math.min(delay * 2, MAX_RETRY_MS);
    try {
      return await open();
    } catch (error) {
      if (error instanceof RpcError || !noHostListening(error)) throw unavailable(socketPath, error);
      lastError = error;
    }
    if (started.failure !== undefined) throw new HostUnavailable(socketPath, "start_failed", started.failure);
    const holder = started.yielded ? lockHolderRuns(stateDir) : undefined;
    if (holder !== undefined && !holder.runs && starts < MAX_STARTS) {
      // What the user would otherwise be told to do: the holder is gone, so start one again.
      started = startHost(options.hostCommand, stateDir);
      starts += 1;
      continue;
    }
    if (Date.now() >= deadline) {
      const why =
        holder?.runs === true
          ? `host pid ${holder.pid} holds ${hostLockPath(stateDir)} but does not answer on the socket`
          : describe(lastError);
      throw new HostUnavailable(
        socketPath,
        "timeout",
        `started a host, but it did not answer within ${timeoutMs} ms (${why})`,
      );
    }
  }
}

function unavailable(socketPath: string, error: unknown): Error {
  if (error instanceof RpcError || error instanceof HostUnavailable) return error;
  return new HostUnavailable(socketPath, "refused", describe(error));
}
