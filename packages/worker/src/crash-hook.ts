import { appendFileSync } from "node:fs";
import { forwardingPort, type RunPort } from "@piw/engine";
import { adopted, applied } from "@piw/protocol";
import { claimOnce, PIW_ENV } from "@piw/state-dir";

/**
 * TEST HOOK, off by default. The durable boundaries at which `PIW_WORKER_CRASH_AT` makes the worker
 * SIGKILL itself, so crash tests can kill a real worker at an exact point instead of racing a timer.
 * `PIW_WORKER_HANG_AT` names the same boundaries: there the worker appends `<pid> <boundary>` to the
 * file `PIW_WORKER_HANG_MARKER` (if set) and then waits forever, so a test can kill the HOST while a
 * worker stands at an exact point. A hanging worker still exits when its host channel closes.
 */
export const CRASH_BOUNDARIES = [
  "starting", // after worker.hello, before the command is accepted
  "before-effect-reserve",
  "after-effect-reserve", // reserved, the side effect has not run
  "after-effect", // the side effect ran, its result is not settled
  "after-effect-settle",
  "between-nodes", // a visit finished, the next has not started
  "after-advance", // a visit finished and the next started in one commit; nothing of the next ran
] as const;
export type CrashBoundary = (typeof CRASH_BOUNDARIES)[number];

const CRASH_AT_ENV = PIW_ENV.workerCrashAt.name;
/** Optional: crash only in the worker that creates this file first, so a relaunched worker survives. */
const CRASH_ONCE_FILE_ENV = PIW_ENV.workerCrashOnceFile.name;
/** Hang (never return) at this boundary instead of dying; the host's death is what the test then tests. */
const HANG_AT_ENV = PIW_ENV.workerHangAt.name;
/** Optional: a file the hanging worker appends `<pid> <boundary>` to, once it stands at the boundary. */
const HANG_MARKER_ENV = PIW_ENV.workerHangMarker.name;

export interface CrashHook {
  /** Die, or hang forever, here if this is the configured boundary; resolve at once otherwise. */
  reach(boundary: CrashBoundary): Promise<void>;
  /** Whether `reach(boundary)` would stop: the port then keeps that boundary reachable. */
  stopsAt(boundary: CrashBoundary): boolean;
}

const noCrash: CrashHook = { reach: async () => {}, stopsAt: () => false };

function isCrashBoundary(value: string): value is CrashBoundary {
  return (CRASH_BOUNDARIES as readonly string[]).includes(value);
}

function boundaryFromEnv(env: NodeJS.ProcessEnv, name: string): CrashBoundary | undefined {
  const at = env[name];
  if (at === undefined || at === "") return undefined;
  if (!isCrashBoundary(at)) {
    throw new Error(`${name}=${at} is not one of ${CRASH_BOUNDARIES.join(", ")}.`);
  }
  return at;
}

/** Never settles; the timer keeps the process alive until the host channel closes, which exits it. */
function hangForever(boundary: CrashBoundary, marker: string | undefined): Promise<void> {
  process.stderr.write(`piw-worker: ${HANG_AT_ENV}=${boundary}: hanging here (test hook)\n`);
  if (marker) appendFileSync(marker, `${process.pid} ${boundary}\n`);
  return new Promise<void>(() => {
    setInterval(() => {}, 60_000);
  });
}

/**
 * The hook `PIW_WORKER_CRASH_AT` and `PIW_WORKER_HANG_AT` ask for. An unknown boundary is a mistake in
 * a test, so it throws rather than silently never crashing.
 */
export function crashHookFromEnv(env: NodeJS.ProcessEnv): CrashHook {
  const crashAt = boundaryFromEnv(env, CRASH_AT_ENV);
  const hangAt = boundaryFromEnv(env, HANG_AT_ENV);
  if (crashAt === undefined && hangAt === undefined) return noCrash;
  const onceFile = env[CRASH_ONCE_FILE_ENV];
  const marker = env[HANG_MARKER_ENV] || undefined;
  return {
    async reach(boundary) {
      if (boundary === crashAt && (!onceFile || claimOnce(onceFile))) {
        process.stderr.write(`piw-worker: ${CRASH_AT_ENV}=${crashAt}: killing myself (test hook)\n`);
        process.kill(process.pid, "SIGKILL");
      }
      if (boundary === hangAt) await hangForever(boundary, marker);
    },
    stopsAt: (boundary) => boundary === crashAt || boundary === hangAt,
  };
}

/**
 * Wraps the host-backed port with the crash hook at the effect and node boundaries; every other
 * method goes straight through. The engine settles an effect right after its side effect returns,
 * so dying as `settleEffect` begins is dying "after the side effect, before settle".
 */
export function crashingPort(inner: RunPort, hook: CrashHook): RunPort {
  const finishNodeVisit: RunPort["finishNodeVisit"] = async (req) => {
    const result = await inner.finishNodeVisit(req);
    await hook.reach("between-nodes");
    return result;
  };
  return forwardingPort(inner, {
    finishNodeVisit,
    /**
     * One commit finishes a visit and starts the next, so "between-nodes" (finished, next not
     * started) does not exist on this path: a hook that stops there gets the two separate calls.
     */
    async advanceNodeVisit(req) {
      if (hook.stopsAt("between-nodes")) {
        const finished = await finishNodeVisit(req.finish);
        if (finished.kind === "conflict" || finished.kind === "recoveryRequired") return finished;
        const advance = { finished: finished.value, started: await inner.startNodeVisit(req.start) };
        return finished.kind === "applied" ? applied(advance) : adopted(advance);
      }
      const result = await inner.advanceNodeVisit(req);
      await hook.reach("after-advance");
      return result;
    },
    async reserveEffect(req) {
      await hook.reach("before-effect-reserve");
      const result = await inner.reserveEffect(req);
      await hook.reach("after-effect-reserve");
      return result;
    },
    async settleEffect(req) {
      await hook.reach("after-effect");
      const result = await inner.settleEffect(req);
      await hook.reach("after-effect-settle");
      return result;
    },
  });
}
