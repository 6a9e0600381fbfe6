import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { piwExtension } from "@piw/extension";

/**
 * How the extension starts a host when none answers: PIW_HOST_COMMAND (a JSON array of argv), else
 * the host app installed beside this package. Without either, it only talks to a running host.
 */
function hostCommand(): string[] | undefined {
  const override = process.env.PIW_HOST_COMMAND;
  if (override) {
    try {
      const argv: unknown = JSON.parse(override);
      if (Array.isArray(argv) && argv.length > 0 && argv.every((a) => typeof a === "string" && a !== "")) {
        return argv as string[];
      }
    } catch {
      // Fall through to the warning below.
    }
    process.stderr.write("piw: PIW_HOST_COMMAND must be a JSON array of strings; ignoring it\n");
  }
  try {
    const manifest = fileURLToPath(import.meta.resolve("@piw/app-host/package.json"));
    const entry = join(dirname(manifest), "dist", "main.js");
    return existsSync(entry) ? [process.execPath, entry] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The worker app's preflight entry, installed beside this package: workflow files load in a child
 * started from it, never in Pi's process. Without it, starting a workflow is refused with a clear error.
 */
function preflightCommand(): string[] | undefined {
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
