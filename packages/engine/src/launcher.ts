/**
 * `@piw/engine/launcher`: what a process that starts workflows needs to ask the preflight child (or the
 * launch cache) for a prepared launch, without the engine's loader, compiler and executor. The CLI's
 * `piw run` loads only this, so its start pays for none of the modules that evaluate workflow code,
 * and it could not evaluate one in its own process if it tried.
 */
export { LaunchRefused } from "./launch/launch-refused.js";
export type { LaunchPreflight, PreflightEnv, PreflightOptions } from "./preflight/evaluate-preflight.js";
export { preflightLaunch, readPreflightEnv } from "./preflight/evaluate-preflight.js";
