// The state directory's rules live in @piw/state-dir, shared with the host and the store.
export { defaultStateDir } from "@piw/state-dir";
export { connectHost } from "./connect-host.js";
export type { CallArgs } from "./host-client.js";
export { HostClient } from "./host-client.js";
export { HostConnection } from "./host-connection.js";
export { HostUnavailable } from "./host-unavailable.js";
export { quickGetRun, quickListRuns } from "./quick-call.js";
export { QuickSession, quickRequestKey } from "./quick-session.js";
export type { CallParams } from "./request-key.js";
export { newRequestKey } from "./request-key.js";
