export {
  defaultStateDir,
  expandHomePath,
  piAgentDir,
  userWorkflowsDir,
} from "./agent-dir.js";
export type { AppEntry } from "./app-entry.js";
export { findAppEntry, HOST_ENTRY, PREFLIGHT_ENTRY, WORKER_ENTRY } from "./app-entry.js";
export type { HerdrPluginRecord } from "./herdr-cli.js";
export {
  field,
  HerdrError,
  herdrPaneOf,
  readHerdrPlugin,
  runHerdr,
  runHerdrJson,
} from "./herdr-cli.js";
export { HERDR_PLUGIN, herdrManifestField, herdrPaneLabel } from "./herdr-plugin.js";
/** @public the package's build (apps/pi-package/tsup.config.ts) writes the manifest; knip does not follow it. */
export { herdrManifest } from "./herdr-plugin.js";
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
export { askIpcChild } from "./ipc-child.js";
export { askPreflightCached } from "./preflight-cache.js";
export { useStateCompileCache } from "./compile-cache.js";
export { claimOnce } from "./once-file.js";
export { checkPiSdkDir, findPiSdkDir, PI_SDK_PACKAGE } from "./pi-sdk-dir.js";
export { markPiProcess, runsUnderPi } from "./pi-tool-process.js";
export type { PiwEnvVariable } from "./piw-env.js";
export { DEFAULT_AGENT_DIR_DISPLAY, PIW_ENV, readPiwEnv } from "./piw-env.js";
export { isProcessAlive, readProcessStat } from "./process-liveness.js";
export {
  hostLockPath,
  hostSocketPath,
  STATE_DB_NAME,
  STATE_DB_SIDE_SUFFIXES,
} from "./state-paths.js";
