import { type FileIdentity, readPrivateFile } from "./private-state.js";
import { isProcessAlive, processStartTime } from "./process-liveness.js";

/** Who holds `host.lock`: the pid, and its start time where the OS tells it (guards pid reuse). */
export interface LockOwner {
  pid: number;
  startTime: string | null;
}

/** This process as a lock owner. */
export function currentLockOwner(): LockOwner {
  return { pid: process.pid, startTime: processStartTime(process.pid) };
}

/** The lock file's one line: `<pid> <start time or ->`. */
export function formatLockOwner(owner: LockOwner): string {
  return `${owner.pid} ${owner.startTime ?? "-"}\n`;
}

function parseLockOwner(text: string): LockOwner | null {
  const [pidText, startTime] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, startTime: startTime && startTime !== "-" ? startTime : null };
}

/**
 * Read the lock's owner and identity through one no-follow descriptor, so both describe the same
 * file. Null when there is no lock; `owner` null when its text is not a lock line (a torn write).
 * Throws StateDirRefused for a link, a non-file or another user's lock.
 */
export function readHostLock(path: string): { owner: LockOwner | null; identity: FileIdentity } | null {
  const read = readPrivateFile(path, "the host lock");
  if (read === null) return null;
  return { owner: parseLockOwner(read.text), identity: read.identity };
}

/** Whether the lock's owner still runs: not gone, not a zombie, and not a new process given its pid. */
export function lockOwnerAlive(owner: LockOwner): boolean {
  return isProcessAlive(owner.pid, owner.startTime);
}
