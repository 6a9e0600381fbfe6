import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** One of piw's process entries, as the published package bundles it and as the workspace builds it. */
export interface AppEntry {
  /** The bundle's file beside the caller in the published package, without `.js` (`piw-host`). */
  readonly bundled: string;
  /** The workspace app that builds it (`@piw/app-host`). */
  readonly app: string;
  /** The built file in that app's `dist/` (`main.js`). */
  readonly built: string;
}

export const HOST_ENTRY: AppEntry = { bundled: "piw-host", app: "@piw/app-host", built: "main.js" };
export const WORKER_ENTRY: AppEntry = { bundled: "piw-worker", app: "@piw/app-worker", built: "main.js" };
export const PREFLIGHT_ENTRY: AppEntry = {
  bundled: "piw-preflight",
  app: "@piw/app-worker",
  built: "preflight.js",
};

export type AppEntryFound =
  | { kind: "found"; path: string }
  /** The workspace app is installed but this file of it is not built. */
  | { kind: "not_built"; path: string }
  /** Neither a bundled file nor the workspace app. */
  | { kind: "app_missing"; app: string };

/**
 * Where an entry is: the bundled sibling of the caller's file (the published `piw` package keeps every
 * entry in one `dist/`), else the workspace app's `dist/`. The caller passes its own `import.meta.url`
 * and `import.meta.resolve`, since the sibling and the app dependency are the caller's, not this file's.
 */
export function findAppEntry(
  entry: AppEntry,
  caller: { url: string; resolve: (specifier: string) => string },
): AppEntryFound {
  const bundled = fileURLToPath(new URL(`./${entry.bundled}.js`, caller.url));
  if (existsSync(bundled)) return { kind: "found", path: bundled };
  let manifest: string;
  try {
    manifest = fileURLToPath(caller.resolve(`${entry.app}/package.json`));
  } catch {
    return { kind: "app_missing", app: entry.app };
  }
  const path = join(dirname(manifest), "dist", entry.built);
  return existsSync(path) ? { kind: "found", path } : { kind: "not_built", path };
}
