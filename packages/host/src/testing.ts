// Benchmark and fault-test knobs, and the host's worker channel for tests: never part of the public
// entry. Only process entries (apps/*/src), tools/bench, tools/soak and test/ folders import
// `@piw/host/testing` (the boundary rule `testing-entry-only-for-entries-and-tests`).
import type { SynchronousMode } from "@piw/store";
import { openTunedStore } from "@piw/store/testing";
import { type HostKnobs, type RunningHost, type StartHostOptions, startHostWith } from "./start-host.js";

export { hostCrashHookFromEnv } from "./crash-hook.js";
export type { WorkerPeer } from "./live-worker.js";
export type { LoneWorkerChannelOptions } from "./lone-worker-channel.js";
export { loneWorkerChannel } from "./lone-worker-channel.js";

export interface HostTuning extends Omit<HostKnobs, "openStore"> {
  /** SQLite's synchronous mode (default FULL; `PIW_SYNCHRONOUS`). */
  synchronous?: SynchronousMode;
}

/** `startHost` with the benchmark and fault-test knobs of `HostTuning`. */
export function startTunedHost(options: StartHostOptions, tuning: HostTuning): Promise<RunningHost> {
  const { synchronous = "FULL", ...rest } = tuning;
  return startHostWith(options, { ...rest, openStore: (store) => openTunedStore({ ...store, synchronous }) });
}
