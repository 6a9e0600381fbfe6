export type { StoreErrorCode } from "./errors.js";
export { StoreError } from "./errors.js";
export type { RunHistoryRecords } from "./history-readers.js";
export type { SynchronousMode } from "./open-database.js";
export { STATE_FILE_NAME } from "./open-database.js";
export type {
  EffectRecord,
  ListRunsQuery,
  RunEventRecord,
  StepRecord,
  WaitingCheckpoint,
} from "./readers.js";
export type { Claim } from "./run-lifecycle.js";
export type { OpenStoreOptions, RunReader } from "./run-store.js";
export { DEFAULT_MAX_BLOB_BYTES, RunStore } from "./run-store.js";
export { SCHEMA_ID } from "./schema.js";
export type { TurnOwnership } from "./turns.js";
export type { LaunchRecord } from "./worker-launches.js";
