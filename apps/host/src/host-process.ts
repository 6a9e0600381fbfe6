import { closeSync, writeSync } from "node:fs";
// piw-host: the one host per user. Started on demand by clients (detached), or by hand.
import { createRequire } from "node:module";
import { defaultStateDir, HostAlreadyRunning, type RunningHost } from "@piw/host";
import { hostCrashHookFromEnv, startTunedHost } from "@piw/host/testing";
import {
  findAppEntry,
  PIW_ENV,
  PREFLIGHT_ENTRY,
  type PiwEnvVariable,
  readPiwEnv,
  WORKER_ENTRY,
} from "@piw/state-dir";

function log(line: string): void {
  process.stderr.write(`piw-host: ${new Date().toISOString()} ${line}\n`);
}

/**
 * The client that started this host reads why it refused to start from this descriptor
 * (`PIW_HOST_REPORT_FD`); it is closed once the host serves or yields. Not passed on to workers.
 */
const reportFd = takeReportFd();

function takeReportFd(): number | undefined {
  const text = process.env[PIW_ENV.hostReportFd.name];
  delete process.env[PIW_ENV.hostReportFd.name];
  const fd = Number(text);
  return text !== undefined && Number.isInteger(fd) && fd > 2 ? fd : undefined;
}

function closeReport(): void {
  if (reportFd === undefined) return;
  try {
    closeSync(reportFd);
  } catch {
    // The client is gone already.
  }
}

function fail(message: string, code = 1): never {
  const line = `piw-host: ${message}\n`;
  process.stderr.write(line);
  if (reportFd !== undefined) {
    try {
      writeSync(reportFd, line);
    } catch {
      // The client is gone already; stderr has it.
    }
  }
  process.exit(code);
}

/**
 * `PIW_WORKER_COMMAND` (a JSON array of argv) wins; otherwise the built worker of this install:
 * `piw-worker.js` beside this file in the published `piw` package, else the workspace's worker app.
 */
function workerCommand(): string[] {
  const override = setting(PIW_ENV.workerCommand);
  if (override !== undefined) return override;
  const entry = findAppEntry(WORKER_ENTRY, { url: import.meta.url, resolve: import.meta.resolve });
  switch (entry.kind) {
    case "found":
    case "not_built":
      // An unbuilt worker fails at its first launch, where the host reports it.
      return [process.execPath, entry.path];
    case "app_missing":
      return fail(`cannot find the piw worker app (${entry.app}); reinstall piw`);
    default:
      return entry satisfies never;
  }
}

/**
 * The preflight child that prepares a schedule's run: `PIW_PREFLIGHT_COMMAND` wins, else the built
 * `piw-preflight.js` of this install, as for the CLI. None found: a firing fails as `preflight_failed`.
 */
function preflightCommand(): string[] {
  const override = setting(PIW_ENV.preflightCommand);
  if (override !== undefined) return override;
  const entry = findAppEntry(PREFLIGHT_ENTRY, { url: import.meta.url, resolve: import.meta.resolve });
  return entry.kind === "app_missing" ? [] : [process.execPath, entry.path];
}

/** A variable of the table, or undefined when unset; an invalid value refuses to start (exit 2). */
function setting<T>(variable: PiwEnvVariable<T>): T | undefined {
  const read = readPiwEnv(process.env, variable);
  switch (read.kind) {
    case "unset":
      return undefined;
    case "set":
      return read.value;
    case "invalid":
      return fail(`${read.message}.`, 2);
    default:
      return read satisfies never;
  }
}

function synchronous(): "FULL" | "NORMAL" {
  return setting(PIW_ENV.synchronous) ?? "FULL";
}

/** `PIW_GROUP_COMMIT=off` commits every request alone: for the commit bench's side-by-side only. */
function groupCommit(): boolean {
  return setting(PIW_ENV.groupCommit) !== "off";
}

/** `PIW_MAX_WORKERS`, when set; else the host's default cap. */
function maxWorkers(): { maxWorkers?: number } {
  const cap = setting(PIW_ENV.maxWorkers);
  return cap === undefined ? {} : { maxWorkers: cap };
}

function version(): string {
  try {
    return (createRequire(import.meta.url)("../package.json") as { version?: string }).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

// Everything the host creates (socket, lock, database) is private to this user from the start.
process.umask(0o077);

let host: RunningHost;
try {
  host = await startTunedHost(
    {
      stateDir: defaultStateDir(),
      workerCommand: workerCommand(),
      preflightCommand: preflightCommand(),
      preflightTimeoutMs: setting(PIW_ENV.preflightTimeoutMs) ?? 10_000,
      ...maxWorkers(),
      version: version(),
      log,
    },
    { synchronous: synchronous(), groupCommit: groupCommit(), crashHook: hostCrashHookFromEnv(process.env) },
  );
} catch (error) {
  if (error instanceof HostAlreadyRunning) {
    process.stderr.write(`piw-host: already running (pid ${error.pid})\n`);
    closeReport();
    process.exit(0);
  }
  fail(error instanceof Error ? error.message : String(error));
}
closeReport();

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.on(signal, () => {
    log(`received ${signal}`);
    void host.stop();
  });
}
// The host must outlive any one bad request: state changes are transactions, so a bug here leaves
// durable state consistent. Log it and keep serving.
process.on("uncaughtException", (error) => log(`uncaught: ${error.name}: ${error.message}`));
process.on("unhandledRejection", (reason) =>
  log(
    `unhandled rejection: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)}`,
  ),
);

await host.stopped;
process.exit(0);
