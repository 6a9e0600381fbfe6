// The state directory's rules live in @piw/state-dir, shared with the host and the store.
export { defaultStateDir } from "@piw/state-dir";
export type { ConnectOptions } from "./connect-host.js";
export { connectHost } from "./connect-host.js";
export type {
  CallArgs,
  ClientKind,
  HostClientEvents,
  HostHello,
  OpenClientOptions,
  Unsubscribe,
  ViewTarget,
  ViewListener,
} from "./host-client.js";
export { HostClient } from "./host-client.js";
export type { HostConnectionEvents, HostConnectionOptions, ReconnectPolicy } from "./host-connection.js";
export { HostConnection } from "./host-connection.js";
export type { HostUnavailableReason } from "./host-unavailable.js";
export { HostUnavailable } from "./host-unavailable.js";
export type { CallParams } from "./request-key.js";
export { newRequestKey } from "./request-key.js";
