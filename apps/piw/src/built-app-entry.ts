import { type AppEntry, findAppEntry } from "@piw/state-dir";
import { CliError } from "./cli-error.js";
import type { ExitCode } from "./exit-codes.js";

/**
 * The file that starts a piw app (`host`, `worker`): its bundle beside this file in the published `piw`
 * package (one bundle directory), else the workspace app's dist, found through the workspace dependency.
 */
export function builtAppEntry(entry: AppEntry, app: string, exitCode: ExitCode): string {
  const found = findAppEntry(entry, { url: import.meta.url, resolve: import.meta.resolve });
  switch (found.kind) {
    case "found":
      return found.path;
    case "app_missing":
      throw new CliError(`cannot find the piw ${app} app (${found.app}); reinstall piw`, exitCode);
    case "not_built":
      throw new CliError(`the piw ${app} is not built (${found.path} is missing); run pnpm build`, exitCode);
    default:
      return found satisfies never;
  }
}
