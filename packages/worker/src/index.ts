export type { CrashBoundary, CrashHook } from "./crash-hook.js";
export {
  CRASH_AT_ENV,
  CRASH_BOUNDARIES,
  CRASH_ONCE_FILE_ENV,
  CrashingPort,
  crashHookFromEnv,
  HANG_AT_ENV,
  HANG_MARKER_ENV,
  noCrash,
} from "./crash-hook.js";
export type { HostPeer } from "./host-run-port.js";
export { HostRunPort } from "./host-run-port.js";
export { loadRunWorkflow } from "./load-run-workflow.js";
export type { WorkerRunOptions } from "./run-worker.js";
export { WORKER_EXIT_CODES, WorkerRun } from "./run-worker.js";
export type { StdioChannelOptions } from "./stdio-channel.js";
export { openStdioChannel } from "./stdio-channel.js";
export { LAUNCH_ID_ENV, runWorkerProcess } from "./worker-process.js";
