import { readProcessStat } from "./process-liveness.js";

/**
 * The variable piw's Pi extension sets in the Pi process when it loads: every process Pi starts
 * afterwards (its bash tool's commands, a `!` shell escape) inherits it, also in Pi runtimes that do
 * not set Pi's own `PI_CODING_AGENT`.
 */
export const PIW_UNDER_PI_ENV = "PIW_UNDER_PI";

/** Mark this (Pi's) process, so that everything it starts carries the mark. */
export function markPiProcess(env: NodeJS.ProcessEnv = process.env): void {
  env[PIW_UNDER_PI_ENV] = "1";
}

/**
 * The names a Pi process has in `/proc/<pid>/stat`: Pi sets its process title to `pi` (`pi-rpc` from
 * its rpc entry), and on Linux that is the process's name too.
 */
const PI_PROCESS_NAMES: ReadonlySet<string> = new Set(["pi", "pi-rpc"]);

/** A chain of parents is never this deep; the bound only guards against a loop in a racing read. */
const MAX_ANCESTORS = 64;

/**
 * Whether this process runs under Pi, that is, started by Pi's bash tool or a `!` escape (or anything
 * else Pi started). Two independent signs, so clearing the environment alone does not hide it: the
 * variables Pi (`PI_CODING_AGENT`, `AI_AGENT=pi`) and piw's extension set in the Pi process, and a
 * parent process named as Pi names itself. The parents are read from `/proc` (Linux); elsewhere only
 * the environment counts. A process that leaves Pi's tree (double fork) and clears its environment is
 * not recognised: this guards against the model's casual route through Pi's tools, not against code
 * that sets out to hide.
 */
export function runsUnderPi(env: NodeJS.ProcessEnv): boolean {
  const marked =
    (env[PIW_UNDER_PI_ENV] ?? "") !== "" || env.PI_CODING_AGENT === "true" || env.AI_AGENT === "pi";
  return marked || hasPiAncestor(process.pid);
}

function hasPiAncestor(pid: number): boolean {
  let current = readProcessStat(pid)?.parentPid;
  for (let depth = 0; current !== undefined && current > 1 && depth < MAX_ANCESTORS; depth++) {
    const stat = readProcessStat(current);
    if (stat === null) return false;
    if (PI_PROCESS_NAMES.has(stat.name)) return true;
    current = stat.parentPid;
  }
  return false;
}
