import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { oneLine } from "@piw/protocol";
import {
  HERDR_PLUGIN,
  HerdrError,
  type HerdrPluginRecord,
  herdrManifestField,
  readHerdrPlugin,
  runHerdr,
} from "@piw/state-dir";
import type { CliContext } from "../cli-context.js";
import { CliError, usageError } from "../cli-error.js";
import { COMMAND_TABLE } from "../command-table.js";
import { ExitCode } from "../exit-codes.js";
import { herdrSyncOutput, type Output } from "../output-schemas.js";
import { packageVersion } from "../package-version.js";
import { parseCommandLine } from "../parse-command-line.js";
import { COMMAND_USAGE } from "../usage.js";

type SyncAction = Output<"herdr">["action"];

/** `piw herdr sync`: point Herdr's plugin at this package (Herdr keeps absolute paths) and enable it. */
export async function herdrCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("herdr", args, COMMAND_TABLE.herdr.options);
  const [action, ...extra] = positionals;
  if (values.help || action === undefined) {
    ctx.print(COMMAND_USAGE.herdr);
    return action === undefined && !values.help ? ExitCode.usage : ExitCode.ok;
  }
  if (action !== "sync")
    throw usageError(`unknown herdr command ${JSON.stringify(action)}; use sync`, "herdr");
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`, "herdr");
  const result = await sync(ctx.io.env);
  if (values.json) ctx.printJson(herdrSyncOutput(result));
  else for (const line of describe(result)) ctx.print(line);
  return ExitCode.ok;
}

/** This package: its root (one folder above the bundle), and its manifest's version checked against it. */
function thisPackage(): { root: string; version: string } {
  const root = realpathSync(fileURLToPath(new URL("..", import.meta.url)));
  const manifest = join(root, HERDR_PLUGIN.manifestFile);
  if (!existsSync(manifest)) {
    throw new CliError(`this piw carries no Herdr plugin (${manifest} is missing)`, ExitCode.failed, [
      "run the piw of the installed package (npm i -g piw), not a checkout's apps/piw",
    ]);
  }
  const text = readFileSync(manifest, "utf8");
  const version = packageVersion();
  if (herdrManifestField(text, "id") !== HERDR_PLUGIN.id || herdrManifestField(text, "version") !== version) {
    throw new CliError(`${manifest} is not the plugin of piw ${version}: reinstall piw`);
  }
  return { root, version };
}

async function sync(env: NodeJS.ProcessEnv): Promise<Omit<Output<"herdr">, "schema">> {
  const { root, version } = thisPackage();
  const herdr = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      throw asCliError(error);
    }
  };
  const before = await herdr(() => readHerdrPlugin(env));
  let action: SyncAction;
  if (before === undefined) {
    await herdr(() => runHerdr(["plugin", "link", root], env));
    action = "linked";
  } else if (!isHere(before, root, version)) {
    await herdr(() => runHerdr(["plugin", "unlink", HERDR_PLUGIN.id], env));
    await herdr(() => runHerdr(["plugin", "link", root], env));
    action = "relinked";
  } else {
    action = before.enabled ? "unchanged" : "enabled";
  }
  let after = await herdr(() => readHerdrPlugin(env));
  if (after !== undefined && isHere(after, root, version) && !after.enabled) {
    await herdr(() => runHerdr(["plugin", "enable", HERDR_PLUGIN.id], env));
    after = await herdr(() => readHerdrPlugin(env));
  }
  if (after === undefined || !isHere(after, root, version) || !after.enabled) {
    throw new CliError("Herdr did not keep the piw plugin linked and enabled here", ExitCode.failed, [
      `expected ${root} at version ${version}; check herdr plugin list`,
    ]);
  }
  const previousRoot = action === "relinked" && before !== undefined ? before.root : null;
  return { action, pluginId: HERDR_PLUGIN.id, version, root, previousRoot, enabled: true };
}

/** Whether Herdr's record points at this package, at its version. */
function isHere(record: HerdrPluginRecord, root: string, version: string): boolean {
  return realOrSame(record.root) === root && record.version === version;
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function describe(result: Omit<Output<"herdr">, "schema">): string[] {
  const at = `${result.root} (version ${result.version})`;
  switch (result.action) {
    case "linked":
      return [`linked the Herdr plugin ${result.pluginId} at ${at}, enabled`];
    case "relinked":
      return [
        `relinked the Herdr plugin ${result.pluginId} to ${at}, enabled`,
        `it was at ${result.previousRoot}`,
      ];
    case "enabled":
      return [`enabled the Herdr plugin ${result.pluginId} at ${at}`];
    case "unchanged":
      return [`the Herdr plugin ${result.pluginId} is linked at ${at} and enabled; nothing to do`];
    default:
      return result.action satisfies never;
  }
}

function asCliError(error: unknown): unknown {
  if (!(error instanceof HerdrError)) return error;
  if (error.problem === "missing") {
    return new CliError("herdr was not found on PATH", ExitCode.failed, [
      `install Herdr ${HERDR_PLUGIN.minHerdrVersion} or newer (see docs/herdr.md), then run piw herdr sync again`,
    ]);
  }
  const said = error.detail === "" ? "" : `: ${error.detail}`;
  return new CliError(oneLine(`${error.message}${said}`, 240));
}
