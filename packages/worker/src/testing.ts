// The worker's fault-test hook, never part of the public entry: `PIW_WORKER_CRASH_AT` names one of
// these boundaries. Only process entries (apps/*/src), tools/bench, tools/soak and test/ folders import
// `@piw/worker/testing` (the boundary rule `testing-entry-only-for-entries-and-tests`).
export type { CrashBoundary } from "./crash-hook.js";
export { CRASH_BOUNDARIES } from "./crash-hook.js";
