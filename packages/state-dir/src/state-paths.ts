import { homedir } from "node:os";
import { join, resolve } from "node:path";

export const STATE_DB_NAME = "state.db";
export const HOST_SOCKET_NAME = "host.sock";
export const HOST_LOCK_NAME = "host.lock";
/** Files SQLite keeps beside the database; they hold committed data too, so they get the same checks. */
export const STATE_DB_SIDE_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

export interface StatePaths {
  stateDir: string;
  databasePath: string;
  socketPath: string;
  lockPath: string;
}

/** Where the host keeps its state: `$PIW_HOME`, else `~/.pi/agent/workflows`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.PIW_HOME;
  if (override !== undefined && override !== "") return override;
  return join(homedir(), ".pi", "agent", "workflows");
}

export function statePaths(stateDir: string): StatePaths {
  const dir = resolve(stateDir);
  return {
    stateDir: dir,
    databasePath: join(dir, STATE_DB_NAME),
    socketPath: join(dir, HOST_SOCKET_NAME),
    lockPath: join(dir, HOST_LOCK_NAME),
  };
}

export function hostSocketPath(stateDir: string): string {
  return statePaths(stateDir).socketPath;
}

export function hostLockPath(stateDir: string): string {
  return statePaths(stateDir).lockPath;
}
