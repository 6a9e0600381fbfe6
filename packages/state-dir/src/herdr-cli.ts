import { execFile } from "node:child_process";
import { HERDR_PLUGIN } from "./herdr-plugin.js";

const HERDR_TIMEOUT_MS = 5_000;
const MAX_REPLY_BYTES = 4 * 1024 * 1024;
/** How much of Herdr's own words an error keeps; callers make it one short line (protocol's oneLine). */
const MAX_DETAIL = 2_000;

/** Why a Herdr command did not give what was asked: Herdr is missing, it refused, or it said nonsense. */
type HerdrProblem = "missing" | "failed" | "reply";

/**
 * A Herdr failure: which command failed and, in `detail`, Herdr's own words (bounded); never our
 * arguments or environment.
 */
export class HerdrError extends Error {
  override readonly name = "HerdrError";
  readonly problem: HerdrProblem;
  readonly detail: string;

  constructor(problem: HerdrProblem, message: string, detail = "") {
    super(message);
    this.problem = problem;
    this.detail = detail.slice(0, MAX_DETAIL);
  }
}

/** Herdr's own variables, read by the Herdr integration only (they are not piw's). */
const HERDR_ENV = {
  /** "1" in every pane Herdr runs. */
  inHerdr: "HERDR_ENV",
  /** The pane this process runs in. */
  paneId: "HERDR_PANE_ID",
  /** The running Herdr binary, when Herdr set it. */
  bin: "HERDR_BIN_PATH",
} as const;

/** The pane Pi runs in when it runs inside Herdr, else undefined. */
export function herdrPaneOf(env: NodeJS.ProcessEnv): string | undefined {
  const pane = env[HERDR_ENV.paneId];
  return env[HERDR_ENV.inHerdr] === "1" && pane !== undefined && pane !== "" ? pane : undefined;
}

/** Run `herdr <args>` (Herdr's own binary when it named one) and return its stdout. */
export function runHerdr(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  const bin = env[HERDR_ENV.bin] || "herdr";
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      [...args],
      { env, timeout: HERDR_TIMEOUT_MS, maxBuffer: MAX_REPLY_BYTES, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
          return reject(new HerdrError("missing", "herdr was not found on PATH"));
        }
        reject(new HerdrError("failed", `herdr ${args.slice(0, 2).join(" ")} failed`, stderr || stdout));
      },
    );
  });
}

/** `runHerdr` for a command that answers JSON. */
export async function runHerdrJson(args: readonly string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  const stdout = await runHerdr(args, env);
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    throw new HerdrError("reply", `herdr ${args.slice(0, 2).join(" ")} did not answer JSON`);
  }
}

/** What Herdr says of the piw plugin. */
export interface HerdrPluginRecord {
  root: string;
  manifestPath: string;
  version: string;
  enabled: boolean;
}

/** The piw plugin as `herdr plugin list --plugin piw --json` reports it; undefined when not linked. */
export async function readHerdrPlugin(env: NodeJS.ProcessEnv): Promise<HerdrPluginRecord | undefined> {
  const reply = await runHerdrJson(["plugin", "list", "--plugin", HERDR_PLUGIN.id, "--json"], env);
  const plugins = field(field(reply, "result"), "plugins");
  if (!Array.isArray(plugins)) throw new HerdrError("reply", "herdr plugin list gave no plugin list");
  const ours = plugins.filter((plugin) => field(plugin, "plugin_id") === HERDR_PLUGIN.id);
  const [plugin] = ours;
  if (plugin === undefined) return undefined;
  const root = field(plugin, "plugin_root");
  const manifestPath = field(plugin, "manifest_path");
  const version = field(plugin, "version");
  const enabled = field(plugin, "enabled");
  if (
    ours.length > 1 ||
    typeof root !== "string" ||
    typeof manifestPath !== "string" ||
    typeof version !== "string" ||
    typeof enabled !== "boolean"
  ) {
    throw new HerdrError("reply", `herdr plugin list gave an unclear record of ${HERDR_PLUGIN.id}`);
  }
  return { root, manifestPath, version, enabled };
}

/** `value[key]` of a JSON object, else undefined. */
export function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
