export type { EmbeddedActivation, EmbeddedStartOptions } from "./embedded-runtime.js";
export { EmbeddedRuntime, newRunId } from "./embedded-runtime.js";
export { StoreRunPort } from "./store-run-port.js";
