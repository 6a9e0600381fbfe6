import { closeSync, openSync } from "node:fs";

/**
 * Whether this process has a controlling terminal: `/dev/tty` opens read-write only then. A person at
 * a terminal has one; a command an agent runs from its shell tool has none (Pi starts those in a new
 * session, without a terminal). Any failure to open it (ENXIO, ENOENT, EACCES, ...) counts as none.
 */
export function hasControllingTerminal(): boolean {
  try {
    closeSync(openSync("/dev/tty", "r+"));
    return true;
  } catch {
    return false;
  }
}
