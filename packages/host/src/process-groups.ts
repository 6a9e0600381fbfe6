import { readFileSync } from "node:fs";

/**
 * Whose process group `pgid` is: `child` when a live process that `parentPid` started leads it, `gone`
 * when no such process exists any more (a short command that already ended), `foreign` otherwise.
 * Read from `/proc` where there is one; elsewhere the worker's word is taken (it is the host's child).
 */
export function groupLeaderOf(pgid: number, parentPid: number): "child" | "gone" | "foreign" {
  if (!Number.isInteger(pgid) || pgid < 2 || pgid === process.pid) return "foreign";
  if (process.platform !== "linux") return "child";
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pgid}/stat`, "utf8");
  } catch {
    return "gone";
  }
  // Fields after the parenthesised command name: state, ppid, pgrp, ...
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[1]) === parentPid && Number(fields[2]) === pgid ? "child" : "foreign";
}

/** Kill whole process groups; a group that is already gone is not an error. Returns those it signalled. */
export function killProcessGroups(pgids: Iterable<number>): number[] {
  const killed: number[] = [];
  for (const pgid of pgids) {
    if (pgid < 2 || pgid === process.pid) continue;
    try {
      process.kill(-pgid, "SIGKILL");
      killed.push(pgid);
    } catch {
      // No such group any more.
    }
  }
  return killed;
}
