import { randomBytes } from "node:crypto";
import { linkSync, lstatSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { currentLockOwner, formatLockOwner, lockOwnerAlive, readHostLock } from "@piw/state-dir";
import { HostAlreadyRunning } from "./host-errors.js";

export interface HostLock {
  readonly path: string;
  release(): void;
}

function unique(path: string, tag: string): string {
  return `${path}.${tag}.${process.pid}.${randomBytes(4).toString("hex")}`;
}

/**
 * Move a dead owner's lock out of the way. Only one racer's rename can move a given file; if what we
 * moved turns out to be a newer lock (another host took over in between), put it back.
 */
function removeStale(path: string, staleIno: number): void {
  const moved = unique(path, "stale");
  try {
    renameSync(path, moved);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (lstatSync(moved).ino !== staleIno) {
    try {
      linkSync(moved, path);
    } catch {
      // A third host already holds a lock; the one we moved lost its file and will find out on stop.
    }
  }
  unlinkSync(moved);
}

/**
 * Take the state directory's host lock atomically: a temp file with our pid is hard-linked to
 * `host.lock`, which fails if the lock exists. A live owner means another host runs
 * (`HostAlreadyRunning`); a dead owner's lock (after kill -9, or a zombie nobody reaped) is taken over.
 */
export function acquireHostLock(path: string): HostLock {
  const temp = unique(path, "new");
  writeFileSync(temp, formatLockOwner(currentLockOwner()), { mode: 0o600, flag: "wx" });
  try {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        linkSync(temp, path);
        return lockHandle(path, lstatSync(path).ino);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      // Another user's lock, a link or a non-file is refused here (StateDirRefused), never taken over.
      const held = readHostLock(path);
      if (held === null) continue;
      if (held.owner !== null && lockOwnerAlive(held.owner)) throw new HostAlreadyRunning(held.owner.pid);
      removeStale(path, held.identity.ino);
    }
    throw new Error(`Could not take ${path}: it kept changing.`);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Already gone.
    }
  }
}

function lockHandle(path: string, ino: number): HostLock {
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      // Remove the lock only while it is still ours: never another host's that took over meanwhile.
      try {
        if (lstatSync(path).ino === ino) unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}
