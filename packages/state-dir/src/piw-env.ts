/**
 * Every `PIW_*` variable a piw process reads or sets for a child, once: its name, how its text is
 * parsed, its help line and who reads it. Code names a variable through this table (`PIW_ENV.home.name`)
 * and reads it with `readPiwEnv`, so a value means the same in every process and an invalid one gets
 * the same message everywhere (packages/state-dir/test/one-owner.test.ts scans for a second copy).
 */

/** Who the variable is for: `user` ones are documented in docs/cli.md; the rest are piw's own. */
type PiwEnvAudience = "user" | "internal" | "bench" | "test";

export type PiwEnvParse<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface PiwEnvVariable<T> {
  readonly name: `PIW_${string}`;
  readonly audience: PiwEnvAudience;
  /** One line: what it does and its default. */
  readonly help: string;
  /** The apps and packages that read it (or set it for a process they start). */
  readonly readers: readonly string[];
  /** The value's meaning; `problem` completes "<name> must …" and never repeats the value. */
  readonly parse: (text: string) => PiwEnvParse<T>;
}

/** An unset or empty variable is `unset` everywhere. */
export type PiwEnvRead<T> =
  | { kind: "unset" }
  | { kind: "set"; value: T }
  | { kind: "invalid"; message: string };

const text = (value: string): PiwEnvParse<string> => ({ ok: true, value });

/** A command line as a JSON array of argv, such as `["node", "/path/to/entry.js"]`. */
function argv(value: string): PiwEnvParse<string[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((a) => typeof a === "string" && a !== "")
  ) {
    return {
      ok: false,
      problem: 'must be a JSON array of one or more non-empty strings, e.g. ["node", "/path/to/entry.js"]',
    };
  }
  return { ok: true, value: parsed };
}

function oneOf<const W extends string>(...words: readonly W[]): (value: string) => PiwEnvParse<W> {
  return (value) => {
    const word = words.find((w) => w === value);
    return word === undefined
      ? { ok: false, problem: `must be ${words.join(" or ")}` }
      : { ok: true, value: word };
  };
}

function wholeNumber(min: number, max: number, unit: string): (value: string) => PiwEnvParse<number> {
  return (value) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= min && n <= max
      ? { ok: true, value: n }
      : { ok: false, problem: `must be a whole number of ${unit}, ${min} to ${max}` };
  };
}

/** How the docs and the usage text name the default agent folder. */
export const DEFAULT_AGENT_DIR_DISPLAY = "~/.pi/agent";

/** The longest preflight time limit `PIW_PREFLIGHT_TIMEOUT_MS` accepts. */
const MAX_PREFLIGHT_TIMEOUT_MS = 600_000;

/** The highest worker cap `PIW_MAX_WORKERS` accepts. */
const MAX_WORKERS = 1_000;

export const PIW_ENV = {
  home: {
    name: "PIW_HOME",
    audience: "user",
    help: `state folder (default ${DEFAULT_AGENT_DIR_DISPLAY}/workflows, or $PI_CODING_AGENT_DIR/workflows)`,
    readers: [
      "state-dir",
      "client (sets it for the host)",
      "host (sets it for workers)",
      "apps/worker",
      "extension",
    ],
    parse: text,
  },
  hostCommand: {
    name: "PIW_HOST_COMMAND",
    audience: "user",
    help: "how to start the host, as a JSON array (default: the built piw-host)",
    readers: ["apps/piw", "apps/pi-package"],
    parse: argv,
  },
  preflightCommand: {
    name: "PIW_PREFLIGHT_COMMAND",
    audience: "internal",
    help: "how to start the child that loads workflow files, as a JSON array (default: the built piw-preflight)",
    readers: ["engine (readPreflightEnv, for apps/piw and extension)"],
    parse: argv,
  },
  preflightTimeoutMs: {
    name: "PIW_PREFLIGHT_TIMEOUT_MS",
    audience: "user",
    help: "how long a workflow file may take to load (default 10000)",
    readers: ["engine (readPreflightEnv, for apps/piw and extension)"],
    parse: wholeNumber(1, MAX_PREFLIGHT_TIMEOUT_MS, "ms"),
  },
  maxWorkers: {
    name: "PIW_MAX_WORKERS",
    audience: "user",
    help: "the most workers the host runs at once (default twice the cores, at least 4)",
    readers: ["apps/host"],
    parse: wholeNumber(1, MAX_WORKERS, "workers"),
  },
  workerCommand: {
    name: "PIW_WORKER_COMMAND",
    audience: "internal",
    help: "how the host starts a worker, as a JSON array (default: the built piw-worker)",
    readers: ["apps/host"],
    parse: argv,
  },
  piSdk: {
    name: "PIW_PI_SDK",
    audience: "internal",
    help: "the folder or entry file of Pi's SDK for isolated agent steps, when no Pi reported it",
    readers: ["pi-agent"],
    parse: text,
  },
  ascii: {
    name: "PIW_ASCII",
    audience: "internal",
    help: "1 draws ASCII glyphs, 0 Unicode (default: from the terminal and locale)",
    readers: ["viewer"],
    parse: text,
  },
  debug: {
    name: "PIW_DEBUG",
    audience: "internal",
    help: "any value prints an error's stack after its message",
    readers: ["apps/piw"],
    parse: text,
  },
  underPi: {
    name: "PIW_UNDER_PI",
    audience: "internal",
    help: "set in Pi's process (and inherited by what it starts), so piw answer can refuse under Pi",
    readers: ["state-dir"],
    parse: text,
  },
  hostReportFd: {
    name: "PIW_HOST_REPORT_FD",
    audience: "internal",
    help: "the descriptor on which a starting host tells the client that started it why it refused",
    readers: ["client (sets it)", "apps/host"],
    parse: text,
  },
  herdrRunId: {
    name: "PIW_HERDR_RUN_ID",
    audience: "internal",
    help: "the run a Herdr viewer pane shows (set by /piw when it opens the pane)",
    readers: ["extension (sets it)", "apps/pi-package"],
    parse: text,
  },
  launchId: {
    name: "PIW_LAUNCH_ID",
    audience: "internal",
    help: "the launch a worker was started for",
    readers: ["host (sets it)", "worker"],
    parse: text,
  },
  synchronous: {
    name: "PIW_SYNCHRONOUS",
    audience: "bench",
    help: "SQLite's synchronous mode for the host's database (default FULL)",
    readers: ["apps/host"],
    parse: oneOf("FULL", "NORMAL"),
  },
  groupCommit: {
    name: "PIW_GROUP_COMMIT",
    audience: "bench",
    help: "off commits every request alone (default on), for the commit bench's side-by-side",
    readers: ["apps/host"],
    parse: oneOf("on", "off"),
  },
  hostCrashAt: {
    name: "PIW_HOST_CRASH_AT",
    audience: "test",
    help: "a point at which the host kills itself",
    readers: ["host (crash hook)"],
    parse: text,
  },
  hostCrashOnceFile: {
    name: "PIW_HOST_CRASH_ONCE_FILE",
    audience: "test",
    help: "a file claimed on the first crash, so the host crashes once",
    readers: ["host (crash hook)"],
    parse: text,
  },
  workerCrashAt: {
    name: "PIW_WORKER_CRASH_AT",
    audience: "test",
    help: "a durable boundary at which the worker kills itself",
    readers: ["worker (crash hook)"],
    parse: text,
  },
  workerCrashOnceFile: {
    name: "PIW_WORKER_CRASH_ONCE_FILE",
    audience: "test",
    help: "a file claimed on the first crash, so the worker crashes once",
    readers: ["worker (crash hook)"],
    parse: text,
  },
  workerHangAt: {
    name: "PIW_WORKER_HANG_AT",
    audience: "test",
    help: "a durable boundary at which the worker waits forever",
    readers: ["worker (crash hook)"],
    parse: text,
  },
  workerHangMarker: {
    name: "PIW_WORKER_HANG_MARKER",
    audience: "test",
    help: "a file the hanging worker appends its pid and boundary to",
    readers: ["worker (crash hook)"],
    parse: text,
  },
} as const satisfies Record<string, PiwEnvVariable<unknown>>;

/** Read one variable of the table; an invalid value's message names the variable, never its value. */
export function readPiwEnv<T>(
  env: Readonly<Record<string, string | undefined>>,
  variable: PiwEnvVariable<T>,
): PiwEnvRead<T> {
  const value = env[variable.name];
  if (value === undefined || value === "") return { kind: "unset" };
  const parsed = variable.parse(value);
  return parsed.ok
    ? { kind: "set", value: parsed.value }
    : { kind: "invalid", message: `${variable.name} ${parsed.problem}` };
}
