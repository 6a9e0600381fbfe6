export { EmbeddedRuntime, newRunId } from "./embedded-runtime.js";
export type { EmbeddedActivation, EmbeddedStartOptions } from "./embedded-runtime.js";
export { StoreRunPort } from "./store-run-port.js";
