import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PIW_ENV, readPiwEnv } from "@piw/state-dir";
import { CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";

/** How `piw` starts a host: PIW_HOST_COMMAND (a JSON array of argv), else the built host app. */
export function resolveHostCommand(env: NodeJS.ProcessEnv): string[] {
  const override = readPiwEnv(env, PIW_ENV.hostCommand);
  switch (override.kind) {
    case "set":
      return override.value;
    case "invalid":
      throw new CliError(override.message, ExitCode.usage);
    case "unset":
      return [process.execPath, builtHostEntry()];
    default:
      return override satisfies never;
  }
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
