export type { EmbeddedActivation, EmbeddedStartOptions } from "./embedded-runtime.js";
export { EmbeddedRuntime } from "./embedded-runtime.js";
export { StoreRunPort } from "./store-run-port.js";
