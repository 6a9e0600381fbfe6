import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { HostAlreadyRunning } from "./host-errors.js";
import { procStatFields } from "./process-groups.js";

/** Who holds the lock: the pid, and the process's start time where the OS tells it (guards pid reuse). */
interface LockOwner {
  pid: number;
  startTime: string | null;
}

export interface HostLock {
  readonly path: string;
  release(): void;
}

/** Linux's start time of a process (field 22 of /proc/<pid>/stat), or null where unavailable. */
function processStartTime(pid: number): string | null {
  return procStatFields(pid)?.[19] ?? null;
}

function isAlive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (owner.startTime === null) return true;
  const now = processStartTime(owner.pid);
  return now === null || now === owner.startTime;
}

function parseOwner(text: string): LockOwner | null {
  const [pidText, startTime] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, startTime: startTime && startTime !== "-" ? startTime : null };
}

/** Read the lock's owner and inode through one descriptor, so both describe the same file. */
function readLock(path: string): { owner: LockOwner | null; ino: number } | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    return { owner: parseOwner(readFileSync(fd, "utf8")), ino: fstatSync(fd).ino };
  } finally {
    closeSync(fd);
  }
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
  if (statSync(moved).ino !== staleIno) {
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
 * (`HostAlreadyRunning`); a dead owner's lock (after kill -9) is taken over.
 */
export function acquireHostLock(path: string): HostLock {
  const temp = unique(path, "new");
  const self: LockOwner = { pid: process.pid, startTime: processStartTime(process.pid) };
  writeFileSync(temp, `${self.pid} ${self.startTime ?? "-"}\n`, { mode: 0o600, flag: "wx" });
  try {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        linkSync(temp, path);
        return lockHandle(path, statSync(path).ino);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const held = readLock(path);
      if (held === null) continue;
      if (held.owner !== null && isAlive(held.owner)) throw new HostAlreadyRunning(held.owner.pid);
      removeStale(path, held.ino);
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
        if (statSync(path).ino === ino) unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}
