import { existsSync, readFileSync } from "node:fs";

/** The non-empty lines of a file a test's workflow appends to; a file not written yet has none. */
export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}
