// The state directory's rules live in @piw/state-dir, shared with the client and the store.
export {
  defaultStateDir,
  StateDirRefused,
} from "@piw/state-dir";
export { HostAlreadyRunning } from "./host-errors.js";
export type { RunningHost, StartHostOptions } from "./start-host.js";
export { startHost } from "./start-host.js";
