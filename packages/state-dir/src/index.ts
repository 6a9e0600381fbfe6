export {
  DEFAULT_AGENT_DIR_DISPLAY,
  defaultStateDir,
  expandHomePath,
  piAgentDir,
  userWorkflowsDir,
} from "./agent-dir.js";
export { currentLockOwner, formatLockOwner, lockOwnerAlive, readHostLock } from "./host-lock-file.js";
export type { FileIdentity } from "./private-state.js";
export {
  confirmSameFile,
  createPrivateFile,
  isPrivateDir,
  prepareStateDir,
  StateDirRefused,
  securePrivateFile,
  verifyHostSocketForClient,
} from "./private-state.js";
export { claimOnce } from "./once-file.js";
export { checkPiSdkDir, findPiSdkDir, PI_SDK_PACKAGE } from "./pi-sdk-dir.js";
export { markPiProcess, PIW_UNDER_PI_ENV, runsUnderPi } from "./pi-tool-process.js";
export { isProcessAlive, readProcessStat } from "./process-liveness.js";
export {
  hostLockPath,
  hostSocketPath,
  STATE_DB_NAME,
  STATE_DB_SIDE_SUFFIXES,
} from "./state-paths.js";
