export type { AgentDirOptions } from "./agent-dir.js";
export {
  DEFAULT_AGENT_DIR_DISPLAY,
  defaultStateDir,
  expandHomePath,
  PI_AGENT_DIR_ENV,
  PIW_HOME_ENV,
  piAgentDir,
  userWorkflowsDir,
  WORKFLOWS_DIR_NAME,
} from "./agent-dir.js";
export type { LockOwner } from "./host-lock-file.js";
export { currentLockOwner, formatLockOwner, lockOwnerAlive, readHostLock } from "./host-lock-file.js";
export type { FileIdentity, StateRefusal } from "./private-state.js";
export {
  confirmSameFile,
  createPrivateFile,
  isPrivateDir,
  prepareStateDir,
  readPrivateFile,
  StateDirRefused,
  securePrivateFile,
  verifyHostSocketForClient,
} from "./private-state.js";
export type { ProcessStat } from "./process-liveness.js";
export { isProcessAlive, processStartTime, readProcessStat } from "./process-liveness.js";
export type { StatePaths } from "./state-paths.js";
export {
  HOST_LOCK_NAME,
  HOST_SOCKET_NAME,
  hostLockPath,
  hostSocketPath,
  STATE_DB_NAME,
  STATE_DB_SIDE_SUFFIXES,
  statePaths,
} from "./state-paths.js";
