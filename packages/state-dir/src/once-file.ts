import { closeSync, openSync } from "node:fs";

/**
 * Creates `file` if nothing is there yet: true for the one process that created it, false for every
 * other (the file, or anything at its path, already existed). `wx` never follows a symlink there.
 */
export function claimOnce(file: string): boolean {
  try {
    closeSync(openSync(file, "wx"));
    return true;
  } catch {
    return false;
  }
}
