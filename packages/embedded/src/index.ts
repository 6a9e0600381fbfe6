export { EmbeddedRuntime } from "./embedded-runtime.js";
