// Benchmark and fault-test knobs, and the host's worker channel for tests: never part of the public
// entry. Only process entries (apps/*/src), tools/bench, tools/soak and test/ folders import
// `@piw/host/testing` (the boundary rule `testing-entry-only-for-entries-and-tests`).
export { hostCrashHookFromEnv } from "./crash-hook.js";
export type { WorkerPeer } from "./live-worker.js";
export type { LoneWorkerChannelOptions } from "./lone-worker-channel.js";
export { loneWorkerChannel } from "./lone-worker-channel.js";
export type { HostTuning } from "./start-host.js";
export { startTunedHost } from "./start-host.js";
