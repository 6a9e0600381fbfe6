export type { StatePaths } from "@piw/state-dir";
// The state directory's rules live in @piw/state-dir, shared with the client and the store.
export {
  defaultStateDir,
  HOST_LOCK_NAME,
  HOST_SOCKET_NAME,
  prepareStateDir,
  StateDirRefused,
  statePaths,
} from "@piw/state-dir";
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
export { HostAlreadyRunning, toRpcError } from "./host-errors.js";
export type { HostLock } from "./host-lock.js";
export { acquireHostLock } from "./host-lock.js";
export type { HostLog } from "./host-log.js";
export { silentLog } from "./host-log.js";
export type { RunningHost, StartHostOptions } from "./start-host.js";
export { startHost } from "./start-host.js";
