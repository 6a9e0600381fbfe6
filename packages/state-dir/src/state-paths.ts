import { join, resolve } from "node:path";

export const STATE_DB_NAME = "state.db";
const HOST_SOCKET_NAME = "host.sock";
const HOST_LOCK_NAME = "host.lock";
/** Files SQLite keeps beside the database; they hold committed data too, so they get the same checks. */
export const STATE_DB_SIDE_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

export interface StatePaths {
  stateDir: string;
  databasePath: string;
  socketPath: string;
  lockPath: string;
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
