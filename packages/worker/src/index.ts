export type { CrashBoundary } from "./crash-hook.js";
export { CRASH_BOUNDARIES } from "./crash-hook.js";
export { runWorkerProcess } from "./worker-process.js";
