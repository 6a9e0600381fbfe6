import type { SynchronousMode } from "./open-database.js";

// How a store is opened: `RunStore.open` takes these; `openTunedStore` (tests and benches) also the synchronous mode.

export interface OpenStoreOptions {
  stateDir: string;
  busyTimeoutMs?: number;
  /** See `OpenDatabaseOptions.maxPageCount`: a size cap that makes writes past it fail as on a full disk. */
  maxPageCount?: number;
  /** Largest blob accepted (default 1 MiB). */
  maxBlobBytes?: number;
  /** Milliseconds since the epoch; injectable so tests control leases. */
  now?: () => number;
}

/** `OpenStoreOptions` with the bench and test knob of SQLite's synchronous mode (`@piw/store/testing`). */
export interface TunedStoreOptions extends OpenStoreOptions {
  synchronous?: SynchronousMode;
}

/** The largest blob a store accepts unless told otherwise. */
export const DEFAULT_MAX_BLOB_BYTES = 1024 * 1024;
