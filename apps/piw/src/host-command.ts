import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";

/** How `piw` starts a host: PIW_HOST_COMMAND (a JSON array of argv), else the built host app. */
export function resolveHostCommand(env: NodeJS.ProcessEnv): string[] {
  const override = env.PIW_HOST_COMMAND;
  if (override !== undefined && override !== "") return parseHostCommand(override);
  return [process.execPath, builtHostEntry()];
}

function parseHostCommand(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((a) => typeof a === "string" && a !== "")) {
    throw new CliError(
      'PIW_HOST_COMMAND must be a JSON array of strings, e.g. ["node", "/path/to/host/main.js"]',
      ExitCode.usage,
    );
  }
  return value;
}

/**
 * The host entry: `piw-host.js` beside this file in the published `piw` package (one bundle directory),
 * else apps/host/dist/main.js, found through the workspace dependency on @piw/app-host.
 */
function builtHostEntry(): string {
  const bundled = fileURLToPath(new URL("./piw-host.js", import.meta.url));
  if (existsSync(bundled)) return bundled;
  let manifest: string;
  try {
    manifest = fileURLToPath(import.meta.resolve("@piw/app-host/package.json"));
  } catch {
    throw new CliError(
      "cannot find the piw host app (@piw/app-host); reinstall piw",
      ExitCode.hostUnavailable,
    );
  }
  const entry = join(dirname(manifest), "dist", "main.js");
  if (!existsSync(entry)) {
    throw new CliError(
      `the piw host is not built (${entry} is missing); run pnpm build`,
      ExitCode.hostUnavailable,
    );
  }
  return entry;
}
