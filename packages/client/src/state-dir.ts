import { homedir } from "node:os";
import { join } from "node:path";

/** Where the host keeps `state.db`, `host.sock` and `host.lock`: `$PIW_HOME`, else `~/.pi/agent/workflows`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.PIW_HOME;
  if (override !== undefined && override !== "") return override;
  return join(homedir(), ".pi", "agent", "workflows");
}

export function hostSocketPath(stateDir: string): string {
  return join(stateDir, "host.sock");
}

export function hostLockPath(stateDir: string): string {
  return join(stateDir, "host.lock");
}
