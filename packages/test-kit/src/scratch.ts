import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A temp directory a test owns; `remove()` is idempotent. */
export interface ScratchDir {
  readonly path: string;
  file(relativePath: string): string;
  remove(): void;
}

export function makeScratchDir(prefix = "piw-e2e-scratch-"): ScratchDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (relativePath) => join(path, relativePath),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/**
 * Writes a throwaway extension source file and returns its path, for `extensions: [path]`.
 * Pi loads it with jiti and maps `typebox` / `@earendil-works/pi-coding-agent` to its own copies.
 */
export function writeExtension(dir: ScratchDir, fileName: string, source: string): string {
  const path = dir.file(fileName);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, source);
  return path;
}
