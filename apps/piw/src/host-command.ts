import { HOST_ENTRY, PIW_ENV, readPiwEnv } from "@piw/state-dir";
import { builtAppEntry } from "./built-app-entry.js";
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
      return [process.execPath, builtAppEntry(HOST_ENTRY, "host", ExitCode.hostUnavailable)];
    default:
      return override satisfies never;
  }
}
