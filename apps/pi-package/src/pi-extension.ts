import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { piwExtension } from "@piw/extension";
import { PIW_ENV, readPiwEnv } from "@piw/state-dir";

/**
 * An entry of this package's bundle (`dist/<name>.js`, beside this file once built): the published
 * package carries the host, worker and preflight child itself.
 */
function bundledEntry(name: string): string[] | undefined {
  const entry = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  return existsSync(entry) ? [process.execPath, entry] : undefined;
}

/**
 * How the extension starts a host when none answers: PIW_HOST_COMMAND (a JSON array of argv), else the
 * bundled host, else the workspace's host app. Without any, it only talks to a running host.
 */
function hostCommand(): string[] | undefined {
  const override = readPiwEnv(process.env, PIW_ENV.hostCommand);
  if (override.kind === "set") return override.value;
  // Pi must load whatever the environment says: like a bad preflight variable, it is reported and ignored.
  if (override.kind === "invalid") process.stderr.write(`piw: ${override.message}; ignoring it\n`);
  const bundled = bundledEntry("piw-host");
  if (bundled !== undefined) return bundled;
  try {
    const manifest = fileURLToPath(import.meta.resolve("@piw/app-host/package.json"));
    const entry = join(dirname(manifest), "dist", "main.js");
    return existsSync(entry) ? [process.execPath, entry] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The preflight entry (bundled, else the workspace's worker app): workflow files load in a child
 * started from it, never in Pi's process. Without it, starting a workflow is refused with a clear error.
 */
function preflightCommand(): string[] | undefined {
  const bundled = bundledEntry("piw-preflight");
  if (bundled !== undefined) return bundled;
  try {
    const manifest = fileURLToPath(import.meta.resolve("@piw/app-worker/package.json"));
    const entry = join(dirname(manifest), "dist", "preflight.js");
    return existsSync(entry) ? [process.execPath, entry] : undefined;
  } catch {
    return undefined;
  }
}

const command = hostCommand();
const preflight = preflightCommand();
export default piwExtension({
  ...(command === undefined ? {} : { hostCommand: command }),
  ...(preflight === undefined ? {} : { preflightCommand: preflight }),
});
