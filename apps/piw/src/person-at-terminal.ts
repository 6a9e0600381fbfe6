import { closeSync, openSync } from "node:fs";
import { runsUnderPi } from "@piw/state-dir";
import { CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";

const UNDER_PI =
  "piw answer gives a person's answer and refuses to run under Pi (its environment or a parent process " +
  "is Pi), where the model's bash tool could run it too; answer with /workflow answer or Pi's gate " +
  "dialog, or run piw answer in a terminal outside Pi; nothing was sent";

const NO_TERMINAL =
  "piw answer needs a terminal: a person answers a checkpoint from a terminal, /workflow answer in Pi, " +
  "or Pi's gate dialog; run without a terminal (an agent's shell has none), nothing was sent";

/**
 * Refuse unless this looks like a person at a terminal of their own: not under Pi, whose bash tool is
 * the model's (a person's `!` escape runs in the same shell and cannot be told apart), and with a
 * controlling terminal. Both are checked here, not in the host: Node cannot read a socket peer's
 * credentials, and only this process can see its own terminal, environment and parents. Any process
 * of the user can still send the host a person's answer; this stops the model's easy route.
 */
export function requirePersonAtTerminal(env: NodeJS.ProcessEnv): void {
  if (runsUnderPi(env)) throw new CliError(UNDER_PI, ExitCode.notAPerson);
  if (!hasControllingTerminal()) throw new CliError(NO_TERMINAL, ExitCode.notAPerson);
}

/**
 * Whether this process has a controlling terminal: `/dev/tty` opens read-write only then. A person at
 * a terminal has one; a command an agent runs from its shell tool has none (Pi starts those in a new
 * session, without a terminal), unless it makes one (`script`). Any failure to open it (ENXIO, ENOENT,
 * EACCES, ...) counts as none.
 */
function hasControllingTerminal(): boolean {
  try {
    closeSync(openSync("/dev/tty", "r+"));
    return true;
  } catch {
    return false;
  }
}
