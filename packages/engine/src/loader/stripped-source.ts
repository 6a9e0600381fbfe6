import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { getCompileCacheDir, stripTypeScriptTypes } from "node:module";
import { join } from "node:path";
import { isPrivateDir } from "@piw/state-dir";

/**
 * A TypeScript module's JavaScript, its types stripped (erased to spaces, so lines and columns stay).
 * Node's stripper is a WebAssembly module that costs 15 MiB resident and 100 ms or more to start, so
 * each result is kept beside V8's compile cache when the process has one (the worker, in the private
 * state folder): the stripper then starts only for bytes that no earlier run has stripped, and a
 * waiting worker never needs it.
 */
const DIR_NAME = "piw-stripped";

export function strippedModuleSource(source: Buffer): string {
  const dir = privateCacheDir();
  // The stripper's output may change with Node, so Node's version is part of the key.
  const key = createHash("sha256").update(`${process.version}\0`).update(source).digest("hex");
  if (dir !== undefined) {
    try {
      return readFileSync(join(dir, `${key}.js`), "utf8");
    } catch {
      // Not stripped before (or unreadable): strip it now.
    }
  }
  const stripped = strip(source.toString("utf8"));
  if (dir !== undefined) save(dir, key, stripped);
  return stripped;
}

/**
 * The folder for stripped modules, when this process has a compile cache and the folder is this user's
 * alone: what is read from it runs as workflow code, so a folder others may write to is not used.
 */
function privateCacheDir(): string | undefined {
  const compileCache = getCompileCacheDir();
  if (compileCache === undefined) return undefined;
  const dir = join(compileCache, DIR_NAME);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  return isPrivateDir(dir) ? dir : undefined;
}

/** Node flags this API as experimental; its one warning would only be noise in the host's log. */
function strip(code: string): string {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return stripTypeScriptTypes(code, { mode: "strip" });
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** Written whole or not at all (a rename), so a reader never sees half a module. */
function save(dir: string, key: string, stripped: string): void {
  const temp = join(dir, `.${key}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, stripped, { mode: 0o600, flag: "wx" });
    renameSync(temp, join(dir, `${key}.js`));
  } catch {
    // Only a shortcut for the next run: this one has its source either way.
  }
}
