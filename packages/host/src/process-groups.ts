import { readFileSync } from "node:fs";

/**
 * Whether `pgid` is a live process that leads its own group and whose parent is `parentPid`. Read from
 * `/proc`, where there is one; elsewhere the worker's word is taken (it is the host's own child).
 */
export function leadsGroupUnder(pgid: number, parentPid: number): boolean {
  if (!Number.isInteger(pgid) || pgid < 2 || pgid === process.pid) return false;
  if (process.platform !== "linux") return true;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pgid}/stat`, "utf8");
  } catch {
    return false; // gone already (a short command), or never there
  }
  // Fields after the parenthesised command name: state, ppid, pgrp, ...
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[1]) === parentPid && Number(fields[2]) === pgid;
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
