import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isProcessAlive } from "@piw/state-dir";

// The piw processes as the tests start them: real host, worker and preflight processes, run from
// source with tsx so that no build is needed; and the one way to stop a host a test started.

export const REPO = resolve(import.meta.dirname, "..", "..", "..");
// An absolute loader path: the host runs in another folder, where a bare `tsx` would not resolve.
export const TSX_LOADER = join(REPO, "node_modules", "tsx", "dist", "loader.mjs");
const fromSource = (entry: string): string[] => [process.execPath, "--import", TSX_LOADER, join(REPO, entry)];

export const HOST_COMMAND = fromSource("apps/host/src/main.ts");
export const WORKER_COMMAND = fromSource("apps/worker/src/main.ts");
export const PREFLIGHT_COMMAND = fromSource("apps/worker/src/preflight.ts");

/** What a host started from source needs in its environment to start its workers from source too. */
export function sourceWorkerEnv(): Record<string, string> {
  return {
    PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
    TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json"),
  };
}

/**
 * The process ID at the start of `file` (a host lock, a pid a test's workflow wrote, a marker's
 * `<pid> ...`), or undefined until the whole number is there. A file read between its creation and
 * its write is empty, and `Number("")` is 0: `process.kill(0, ...)` signals the test's own process
 * group, which is every process of the test run.
 */
export function pidIn(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim().split(/\s+/)[0]);
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/** The PID in the host lock of a state dir, if a host ever ran there. */
export function hostPidIn(stateDir: string): number | undefined {
  return pidIn(join(stateDir, "host.lock"));
}

/**
 * Stop a host a test started (SIGTERM) and wait up to `waitMs` for it to exit: it stops its workers
 * first, and both may still write caches in the state dir until then.
 */
export async function stopHostProcess(pid: number, waitMs = 10_000): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let waited = 0; waited < waitMs && isProcessAlive(pid); waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stop the host that holds `stateDir/host.lock`, if one does, and wait until it has gone. */
export async function stopHost(stateDir: string): Promise<void> {
  const pid = hostPidIn(stateDir);
  if (pid !== undefined) await stopHostProcess(pid);
}
