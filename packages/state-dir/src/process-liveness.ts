import { readFileSync } from "node:fs";

/** What Linux's `/proc/<pid>/stat` says about one process. */
export interface ProcessStat {
  /** The command name (`comm`, at most 15 bytes): the executable's name, or a title the process set. */
  name: string;
  /** One letter: R, S, D, T, t, Z (zombie: exited, not yet reaped), X (dead), I, P, … */
  state: string;
  parentPid: number;
  processGroup: number;
  /** Clock ticks since boot when the process started (field 22); with the pid, names one process. */
  startTime: string;
}

/**
 * Read `/proc/<pid>/stat`, or null when there is no such process or no `/proc`. The command name in
 * parentheses may hold spaces and parentheses, so the fields are counted from its last `)`.
 */
export function readProcessStat(pid: number): ProcessStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const nameEnd = text.lastIndexOf(")");
  const name = text.slice(text.indexOf("(") + 1, nameEnd);
  const fields = text.slice(nameEnd + 2).split(" ");
  const [state, parentPid, processGroup] = fields;
  const startTime = fields[19];
  if (state === undefined || parentPid === undefined || processGroup === undefined || !startTime) {
    return null;
  }
  return { name, state, parentPid: Number(parentPid), processGroup: Number(processGroup), startTime };
}

/** The start time that, with its pid, tells this process from a later one given the same pid. */
export function processStartTime(pid: number): string | null {
  return readProcessStat(pid)?.startTime ?? null;
}

let procChecked: boolean | undefined;

/** Whether `/proc` can be read here at all (Linux with /proc mounted); without it, a missing entry proves nothing. */
function procReadable(): boolean {
  procChecked ??= readProcessStat(process.pid) !== null;
  return procChecked;
}

/**
 * Whether `pid` is a live process — and, when `startTime` is given, still the same process that had
 * it then. A zombie is dead: it has exited and only waits for a parent (often a PID 1 that never
 * reaps) to collect its status, so a lock it holds or a socket it bound serves no one.
 * Without `/proc` only the signal-0 probe is left, which cannot see zombies or reuse.
 */
export function isProcessAlive(pid: number, startTime?: string | null): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (procReadable()) {
    const stat = readProcessStat(pid);
    if (stat === null) return false;
    if (stat.state === "Z" || stat.state === "X") return false;
    return startTime === undefined || startTime === null || stat.startTime === startTime;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
