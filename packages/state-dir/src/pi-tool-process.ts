import { readFileSync } from "node:fs";
import { PIW_ENV, readPiwEnv } from "./piw-env.js";
import { readProcessStat } from "./process-liveness.js";

/**
 * Mark this process (Pi's, or a worker's that runs Pi sessions), so that everything it starts carries
 * the mark in its environment (`PIW_UNDER_PI`), also where Pi's own `PI_CODING_AGENT` is not set (Pi's
 * SDK sets none).
 */
export function markPiProcess(): void {
  process.env[PIW_ENV.underPi.name] = "1";
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
 * else Pi or an isolated step's Pi session started). Two independent signs, so clearing its own
 * environment does not hide it: the variables Pi (`PI_CODING_AGENT`, `AI_AGENT=pi`) and piw
 * (`PIW_UNDER_PI`) set in the Pi process, and a parent that is Pi, by its name or by those variables
 * in the environment it was started with (the shell Pi's bash tool starts has them, whatever the
 * command then clears). Parents are read from `/proc` (Linux); elsewhere only the environment counts.
 * A process that leaves Pi's tree (a double fork) and clears its environment is not recognised: this
 * stops the model's casual route through Pi's tools, not code that sets out to hide.
 */
export function runsUnderPi(env: NodeJS.ProcessEnv): boolean {
  return carriesPiMarks(env) || hasPiAncestor(process.pid);
}

function carriesPiMarks(env: NodeJS.ProcessEnv): boolean {
  return (
    readPiwEnv(env, PIW_ENV.underPi).kind === "set" || env.PI_CODING_AGENT === "true" || env.AI_AGENT === "pi"
  );
}

function hasPiAncestor(pid: number): boolean {
  let current = readProcessStat(pid)?.parentPid;
  for (let depth = 0; current !== undefined && current > 1 && depth < MAX_ANCESTORS; depth++) {
    const stat = readProcessStat(current);
    if (stat === null) return false;
    if (PI_PROCESS_NAMES.has(stat.name) || carriesPiMarks(startingEnvironment(current))) return true;
    current = stat.parentPid;
  }
  return false;
}

/** The environment a process was started with (`/proc/<pid>/environ`), or none when unreadable. */
function startingEnvironment(pid: number): NodeJS.ProcessEnv {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return {};
  }
  const env: NodeJS.ProcessEnv = {};
  for (const entry of text.split("\0")) {
    const at = entry.indexOf("=");
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}
