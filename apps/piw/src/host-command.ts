import { findAppEntry, HOST_ENTRY, PIW_ENV, readPiwEnv } from "@piw/state-dir";
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
  const entry = findAppEntry(HOST_ENTRY, { url: import.meta.url, resolve: import.meta.resolve });
  switch (entry.kind) {
    case "found":
      return entry.path;
    case "app_missing":
      throw new CliError(
        `cannot find the piw host app (${entry.app}); reinstall piw`,
        ExitCode.hostUnavailable,
      );
    case "not_built":
      throw new CliError(
        `the piw host is not built (${entry.path} is missing); run pnpm build`,
        ExitCode.hostUnavailable,
      );
    default:
      return entry satisfies never;
  }
}
