import type { RunEnv } from "@piw/protocol";

/** The worker's own variables, which the run's environment never replaces: state folder, launch, Pi's SDK, test hooks. */
const WORKER_OWNED = /^PIW_(HOME|LAUNCH_ID|PI_SDK|WORKER_[A-Z_]+)$/;

/**
 * Make the run's saved environment this process's, before any workflow code runs: a worker runs one
 * command of one run, so `process.env` in action code and every child process (shell nodes, commands
 * an action spawns) see what the shell or Pi that started the run saw. The worker's own variables
 * stay. Without a saved environment (a run saved without one) nothing changes. Returns the
 * environment the run's commands start from.
 */
export function enterRunEnv(saved: RunEnv | undefined, env: NodeJS.ProcessEnv = process.env): RunEnv {
  const own: RunEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (saved === undefined || WORKER_OWNED.test(name))) own[name] = value;
  }
  if (saved === undefined) return own;
  const merged: RunEnv = { ...saved, ...own };
  for (const name of Object.keys(env)) if (!(name in merged)) delete env[name];
  Object.assign(env, merged);
  return merged;
}
