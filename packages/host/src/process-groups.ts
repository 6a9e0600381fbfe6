import { readProcessStat } from "@piw/state-dir";

/**
 * Whose process group `pgid` is: `child` when a live process that `parentPid` started leads it, `gone`
 * when no such process exists any more (a short command that already ended), `foreign` otherwise.
 * Read from `/proc` where there is one; elsewhere the worker's word is taken (it is the host's child).
 */
export function groupLeaderOf(pgid: number, parentPid: number): "child" | "gone" | "foreign" {
  if (!mayKillGroup(pgid)) return "foreign";
  if (process.platform !== "linux") return "child";
  const stat = readProcessStat(pgid);
  if (stat === null) return "gone";
  return stat.parentPid === parentPid && stat.processGroup === pgid ? "child" : "foreign";
}

/** Never group 0 (our own), 1 (every process we may signal) or the host's own pid. */
export function mayKillGroup(pgid: number): boolean {
  return Number.isInteger(pgid) && pgid >= 2 && pgid !== process.pid;
}

/** Kill whole process groups; a group that is already gone is not an error. Returns those it signalled. */
export function killProcessGroups(pgids: Iterable<number>): number[] {
  const killed: number[] = [];
  for (const pgid of pgids) {
    if (!mayKillGroup(pgid)) continue;
    try {
      process.kill(-pgid, "SIGKILL");
      killed.push(pgid);
    } catch {
      // No such group any more.
    }
  }
  return killed;
}
