import { closeSync, openSync } from "node:fs";
import type { AgentEvent, RunPort } from "@piw/engine";
import type {
  EnqueueMessage,
  FinishNodeVisit,
  RecoveryReason,
  ReserveEffect,
  RunEnding,
  SettleEffect,
  StartNodeVisit,
} from "@piw/protocol";

/**
 * TEST HOOK, off by default. The durable boundaries at which `PIW_WORKER_CRASH_AT` makes the worker
 * SIGKILL itself, so crash tests can kill a real worker at an exact point instead of racing a timer.
 */
export const CRASH_BOUNDARIES = [
  "starting", // after worker.hello, before the command is accepted
  "before-effect-reserve",
  "after-effect-reserve", // reserved, the side effect has not run
  "after-effect", // the side effect ran, its result is not settled
  "after-effect-settle",
  "between-nodes", // a visit finished, the next has not started
] as const;
export type CrashBoundary = (typeof CRASH_BOUNDARIES)[number];

export const CRASH_AT_ENV = "PIW_WORKER_CRASH_AT";
/** Optional: crash only in the worker that creates this file first, so a relaunched worker survives. */
export const CRASH_ONCE_FILE_ENV = "PIW_WORKER_CRASH_ONCE_FILE";

export interface CrashHook {
  /** Die here if this is the configured boundary; return otherwise. */
  reach(boundary: CrashBoundary): void;
}

export const noCrash: CrashHook = { reach() {} };

function isCrashBoundary(value: string): value is CrashBoundary {
  return (CRASH_BOUNDARIES as readonly string[]).includes(value);
}

/** Claims the once-file atomically; false when another worker already crashed through it. */
function claimOnce(file: string): boolean {
  try {
    closeSync(openSync(file, "wx"));
    return true;
  } catch {
    return false;
  }
}

/**
 * The hook `PIW_WORKER_CRASH_AT` asks for. An unknown boundary is a mistake in a test, so it throws
 * rather than silently never crashing.
 */
export function crashHookFromEnv(env: NodeJS.ProcessEnv): CrashHook {
  const at = env[CRASH_AT_ENV];
  if (at === undefined || at === "") return noCrash;
  if (!isCrashBoundary(at)) {
    throw new Error(`${CRASH_AT_ENV}=${at} is not one of ${CRASH_BOUNDARIES.join(", ")}.`);
  }
  const onceFile = env[CRASH_ONCE_FILE_ENV];
  return {
    reach(boundary) {
      if (boundary !== at) return;
      if (onceFile && !claimOnce(onceFile)) return;
      process.stderr.write(`piw-worker: ${CRASH_AT_ENV}=${at}: killing myself (test hook)\n`);
      process.kill(process.pid, "SIGKILL");
    },
  };
}

/**
 * Wraps the host-backed port with the crash hook at the effect and node boundaries. The engine
 * settles an effect right after its side effect returns, so dying as `settleEffect` begins is dying
 * "after the side effect, before settle".
 */
export class CrashingPort implements RunPort {
  constructor(
    private readonly inner: RunPort,
    private readonly hook: CrashHook,
  ) {}

  readRun() {
    return this.inner.readRun();
  }
  markRunning() {
    return this.inner.markRunning();
  }
  loadSnapshot() {
    return this.inner.loadSnapshot();
  }
  startNodeVisit(req: StartNodeVisit) {
    return this.inner.startNodeVisit(req);
  }
  async finishNodeVisit(req: FinishNodeVisit) {
    const result = await this.inner.finishNodeVisit(req);
    this.hook.reach("between-nodes");
    return result;
  }
  async reserveEffect(req: ReserveEffect) {
    this.hook.reach("before-effect-reserve");
    const result = await this.inner.reserveEffect(req);
    this.hook.reach("after-effect-reserve");
    return result;
  }
  async settleEffect(req: SettleEffect) {
    this.hook.reach("after-effect");
    const result = await this.inner.settleEffect(req);
    this.hook.reach("after-effect-settle");
    return result;
  }
  enqueueMessage(req: EnqueueMessage) {
    return this.inner.enqueueMessage(req);
  }
  finishRun(ending: RunEnding) {
    return this.inner.finishRun(ending);
  }
  parkRun(reason: RecoveryReason) {
    return this.inner.parkRun(reason);
  }
  nextAgentEvent(visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent> {
    return this.inner.nextAgentEvent(visit, signal);
  }
}
