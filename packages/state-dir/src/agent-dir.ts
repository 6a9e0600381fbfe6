import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PIW_ENV, readPiwEnv } from "./piw-env.js";

/** Pi's variable for its agent folder (Pi's `ENV_AGENT_DIR` for the app name `pi`). */
const PI_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR";
/** The folder under Pi's agent folder that holds user workflows and piw's state. */
const WORKFLOWS_DIR_NAME = "workflows";

export interface AgentDirOptions {
  /** Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The home that `~` and the default folder use. Default: `os.homedir()`. */
  homeDir?: string;
}

/**
 * A path from the environment read the way Pi reads its agent folder: `~` and `~/…` are the home,
 * a `file://` URL is its path, anything else is used as it is.
 */
export function expandHomePath(path: string, homeDir: string = homedir()): string {
  if (path === "~") return homeDir;
  if (path.startsWith("~/")) return join(homeDir, path.slice(2));
  if (path.startsWith("file://")) return fileURLToPath(path);
  return path;
}

/**
 * Pi's agent folder, computed as Pi's `getAgentDir()` does: `$PI_CODING_AGENT_DIR` when set and not
 * empty, else `~/.pi/agent`. Computed here rather than imported, so processes that run without Pi (the
 * host, workers, the CLI) agree with the Pi they serve.
 */
export function piAgentDir(options: AgentDirOptions = {}): string {
  const env = options.env ?? process.env;
  const home = options.homeDir ?? homedir();
  const fromEnv = env[PI_AGENT_DIR_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return expandHomePath(fromEnv, home);
  return join(home, ".pi", "agent");
}

/** The user's own workflows (`<agent dir>/workflows`), searched after the project's. */
export function userWorkflowsDir(options: AgentDirOptions = {}): string {
  return join(piAgentDir(options), WORKFLOWS_DIR_NAME);
}

/** Where the host keeps its state: `$PIW_HOME`, else `<agent dir>/workflows`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, homeDir?: string): string {
  const override = readPiwEnv(env, PIW_ENV.home);
  if (override.kind === "set") return expandHomePath(override.value, homeDir);
  return userWorkflowsDir({ env, ...(homeDir === undefined ? {} : { homeDir }) });
}
