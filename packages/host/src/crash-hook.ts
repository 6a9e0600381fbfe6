import { claimOnce, PIW_ENV } from "@piw/state-dir";

/**
 * TEST HOOK, off by default. The points at which `PIW_HOST_CRASH_AT` makes the host SIGKILL itself, so
 * a test can lose a reply at an exact point instead of racing a timer (the worker has its own hook).
 */
const HOST_CRASH_BOUNDARIES = [
  // A request that creates a run (reserve, answer, restart) is committed; its reply was not sent.
  "after-create",
] as const;
type HostCrashBoundary = (typeof HOST_CRASH_BOUNDARIES)[number];

const HOST_CRASH_AT_ENV = PIW_ENV.hostCrashAt.name;
/** Optional: crash only in the host that creates this file first, so the next host (same env) serves. */
const HOST_CRASH_ONCE_FILE_ENV = PIW_ENV.hostCrashOnceFile.name;

export interface HostCrashHook {
  /** Die here if this is the configured boundary; return at once otherwise. */
  reach(boundary: HostCrashBoundary): void;
}

export const noHostCrash: HostCrashHook = { reach: () => {} };

function isHostCrashBoundary(value: string): value is HostCrashBoundary {
  return (HOST_CRASH_BOUNDARIES as readonly string[]).includes(value);
}

/** The hook the environment asks for. An unknown boundary is a mistake in a test, so it throws. */
export function hostCrashHookFromEnv(env: NodeJS.ProcessEnv): HostCrashHook {
  const at = env[HOST_CRASH_AT_ENV];
  if (at === undefined || at === "") return noHostCrash;
  if (!isHostCrashBoundary(at)) {
    throw new Error(`${HOST_CRASH_AT_ENV}=${at} is not one of ${HOST_CRASH_BOUNDARIES.join(", ")}.`);
  }
  const onceFile = env[HOST_CRASH_ONCE_FILE_ENV] || undefined;
  return {
    reach(boundary) {
      if (boundary !== at || (onceFile !== undefined && !claimOnce(onceFile))) return;
      process.stderr.write(`piw-host: ${HOST_CRASH_AT_ENV}=${at}: killing myself (test hook)\n`);
      process.kill(process.pid, "SIGKILL");
    },
  };
}
