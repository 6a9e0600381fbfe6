export type { StoreErrorCode } from "./errors.js";
export { StoreError } from "./errors.js";
export type { SynchronousMode } from "./open-database.js";
export { STATE_FILE_NAME } from "./open-database.js";
export type { StepRecord } from "./readers.js";
export type { Claim } from "./run-lifecycle.js";
export type { OpenStoreOptions, RunReader } from "./run-store.js";
export { RunStore } from "./run-store.js";
export { SCHEMA_ID } from "./schema.js";
