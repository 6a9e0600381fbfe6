import { rmSync } from "node:fs";

/** Errors a removal meets while some process still writes into the tree. */
const STILL_WRITTEN = new Set(["ENOTEMPTY", "EBUSY", "EPERM"]);
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Removes a test's directory tree, waiting out processes that still write into it.
 *
 * A worker that outlives its killed host exits on its own a moment later and flushes Node's compile
 * cache into the state dir as it goes, so a removal can race its last files. `rmSync`'s own retries
 * proved too short for that on a loaded machine; this keeps trying for `withinMs` and then reports
 * the last error.
 */
export function removeTree(path: string, withinMs = 30_000): void {
  const giveUpAt = Date.now() + withinMs;
  for (;;) {
    try {
      rmSync(path, { recursive: true, force: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (!STILL_WRITTEN.has(code) || Date.now() >= giveUpAt) throw error;
      Atomics.wait(PAUSE, 0, 0, 100);
    }
  }
}
