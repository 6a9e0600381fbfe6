import { enableCompileCache } from "node:module";
import { join } from "node:path";
import { isPrivateDir } from "./private-state.js";

/**
 * Keeps this process's V8 code cache in `<stateDir>/compile-cache` when that folder already exists
 * and is private (the host's workers make it): a later start of the same code skips most of its
 * compiling. Creates nothing, so a refused command leaves the state folder as it was. Call it before
 * the modules it should cover are imported.
 */
export function useStateCompileCache(stateDir: string): boolean {
  const cacheDir = join(stateDir, "compile-cache");
  if (!isPrivateDir(stateDir) || !isPrivateDir(cacheDir)) return false;
  enableCompileCache(cacheDir);
  return true;
}
