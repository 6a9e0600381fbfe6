// Benchmark and test knobs of the store, never part of the public entry. Only process entries
// (apps/*/src), other packages' testing entries, tools/bench, tools/soak and test/ folders import
// `@piw/store/testing` (the boundary rule `testing-entry-only-for-entries-and-tests`).
export type { TunedStoreOptions } from "./store-options.js";
export { openTunedStore } from "./run-store.js";
