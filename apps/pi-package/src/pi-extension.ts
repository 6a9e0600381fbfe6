import { piwExtension } from "@piw/extension";
import {
  type AppEntry,
  findAppEntry,
  HOST_ENTRY,
  PIW_ENV,
  PREFLIGHT_ENTRY,
  readPiwEnv,
} from "@piw/state-dir";

/**
 * An entry of this package's bundle (`dist/<name>.js`, beside this file once built: the published
 * package carries the host, worker and preflight child itself), else the workspace app's build.
 */
function builtEntry(entry: AppEntry): string[] | undefined {
  const found = findAppEntry(entry, { url: import.meta.url, resolve: import.meta.resolve });
  return found.kind === "found" ? [process.execPath, found.path] : undefined;
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
  return builtEntry(HOST_ENTRY);
}

/**
 * The preflight entry (bundled, else the workspace's worker app): workflow files load in a child
 * started from it, never in Pi's process. Without it, starting a workflow is refused with a clear error.
 */
function preflightCommand(): string[] | undefined {
  return builtEntry(PREFLIGHT_ENTRY);
}

const command = hostCommand();
const preflight = preflightCommand();
export default piwExtension({
  ...(command === undefined ? {} : { hostCommand: command }),
  ...(preflight === undefined ? {} : { preflightCommand: preflight }),
});
