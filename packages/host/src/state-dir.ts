import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { StateDirUnusable } from "./host-errors.js";

export const HOST_SOCKET_NAME = "host.sock";
export const HOST_LOCK_NAME = "host.lock";

export interface StatePaths {
  stateDir: string;
  socketPath: string;
  lockPath: string;
}

export function statePaths(stateDir: string): StatePaths {
  const dir = resolve(stateDir);
  return { stateDir: dir, socketPath: join(dir, HOST_SOCKET_NAME), lockPath: join(dir, HOST_LOCK_NAME) };
}

/** Create the state directory private to this user (0700), tightening one we own, refusing another's. */
export function prepareStateDir(stateDir: string): StatePaths {
  const paths = statePaths(stateDir);
  mkdirSync(paths.stateDir, { recursive: true, mode: 0o700 });
  const stat = statSync(paths.stateDir);
  if (!stat.isDirectory()) throw new StateDirUnusable(`${paths.stateDir} is not a directory.`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new StateDirUnusable(`${paths.stateDir} belongs to another user; piw keeps its state private.`);
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(paths.stateDir, 0o700);
  return paths;
}
