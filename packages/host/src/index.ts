export type { LiveWorkerIndex, ViewReader } from "./build-run-view.js";
export { buildRunSummary, buildRunView } from "./build-run-view.js";
export type { HostCrashBoundary, HostCrashHook } from "./crash-hook.js";
export {
  HOST_CRASH_AT_ENV,
  HOST_CRASH_BOUNDARIES,
  HOST_CRASH_ONCE_FILE_ENV,
  hostCrashHookFromEnv,
  noHostCrash,
} from "./crash-hook.js";
export { HostAlreadyRunning, StateDirUnusable, toRpcError } from "./host-errors.js";
export type { HostLock } from "./host-lock.js";
export { acquireHostLock } from "./host-lock.js";
export type { HostLog } from "./host-log.js";
export { silentLog } from "./host-log.js";
export { allocateRunId } from "./run-id.js";
export type { RunningHost, StartHostOptions } from "./start-host.js";
export { startHost } from "./start-host.js";
export type { StatePaths } from "./state-dir.js";
export { HOST_LOCK_NAME, HOST_SOCKET_NAME, prepareStateDir, statePaths } from "./state-dir.js";
