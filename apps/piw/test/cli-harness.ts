import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  HOST_COMMAND as hostCommand,
  hostPidIn,
  isAlive,
  PREFLIGHT_COMMAND as preflightCommand,
  removeTree,
  REPO as repo,
  TSX_LOADER as tsx,
  waitFor,
  WORKER_COMMAND as workerCommand,
} from "@piw/test-kit";

export { hostCommand, repo, workerCommand };
const cliEntry = join(repo, "apps/piw/src/main.ts");

export const example = (name: string) => join(repo, "examples", `${name}.workflow.ts`);

// Workflows the tests run by name from a project's `.pi/workflows/`. They live in the test rather than
// in files under apps/, where their `piw` import would reach past the engine's public entry.
const PROJECT_WORKFLOWS: Record<string, string> = {
  slow: `import { compute, defineWorkflow, shell } from "piw";

/** A run that stays busy long enough to be cancelled or detached from. */
export default defineWorkflow({
  name: "slow",
  startAt: "first",
  nodes: {
    first: compute({ run: () => "started" }),
    wait: shell({ exec: () => ["sleep", "20"], timeoutMs: 60_000 }),
  },
  edges: { first: { to: "wait" }, wait: { to: "done" } },
});
`,
  steps: `import { compute, defineWorkflow, shell } from "piw";

/**
 * A command that waits until the test creates \`release\` in the run's folder, then a second node:
 * a pause asked for during the command lands between them.
 */
export default defineWorkflow({
  name: "steps",
  startAt: "work",
  nodes: {
    work: shell({ exec: () => ["sh", "-c", "until [ -e release ]; do sleep 0.05; done"], timeoutMs: 60_000 }),
    after: compute({ run: () => "after" }),
  },
  edges: { work: { to: "after" }, after: { to: "done" } },
});
`,
  broken: `import { compute, defineWorkflow, shell } from "piw";

/** The second step's command fails, so the run fails. */
export default defineWorkflow({
  name: "broken",
  startAt: "prepare",
  nodes: {
    prepare: compute({ run: () => "ready" }),
    fail: shell({ exec: () => ["sh", "-c", "echo nope >&2; exit 3"] }),
  },
  edges: { prepare: { to: "fail" }, fail: { to: "done" } },
});
`,
  chat: `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

/** An agent step pinned to the Pi conversation: a shell has none to run it in. */
export default defineWorkflow({
  name: "chat",
  startAt: "ask",
  nodes: { ask: agent({ session: "conversation", prompt: "Say hi.", output: z.string() }) },
  edges: { ask: { to: "done" } },
});
`,
};

/** A project folder whose `.pi/workflows/` holds the test workflows. */
export function makeProject(): string {
  const project = mkdtempSync(join(tmpdir(), "piw-project-"));
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  for (const [name, source] of Object.entries(PROJECT_WORKFLOWS)) {
    writeFileSync(join(project, ".pi", "workflows", `${name}.workflow.ts`), source);
  }
  return project;
}

export function makeHome(): string {
  return mkdtempSync(join(tmpdir(), "piw-cli-"));
}

function piwEnv(home: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PIW_HOME: home,
    PIW_HOST_COMMAND: JSON.stringify(hostCommand),
    PIW_WORKER_COMMAND: JSON.stringify(workerCommand),
    PIW_PREFLIGHT_COMMAND: JSON.stringify(preflightCommand),
    TSX_TSCONFIG_PATH: join(repo, "tsconfig.json"),
    NO_COLOR: "1",
    ...extra,
  };
}

/** The real CLI from source, as a child process. */
export interface PiwOptions {
  env?: NodeJS.ProcessEnv;
  /** The folder piw runs in; default the repository. */
  cwd?: string;
  /** Start it in a new session, without a controlling terminal (like an agent's shell tool). */
  detached?: boolean;
  /** On a terminal: start `script` from a parent with this process title (Pi's is `pi`). */
  parentTitle?: string;
  /** On a terminal: variables the shell in it removes (`env -u`) just before it runs piw. */
  unsetInTerminal?: string[];
}

export function spawnPiw(home: string, args: string[], options: PiwOptions = {}): ChildProcess {
  return spawn(process.execPath, ["--import", tsx, cliEntry, ...args], {
    cwd: options.cwd ?? repo,
    env: piwEnv(home, options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
    // In a new session without a controlling terminal, as Pi's bash tool runs a command.
    detached: options.detached === true,
  });
}

export interface PiwResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function collect(child: ChildProcess): Promise<PiwResult> & { stdout(): string } {
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<PiwResult>((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return Object.assign(done, { stdout: () => stdout });
}

export function piw(home: string, args: string[], options: PiwOptions = {}): Promise<PiwResult> {
  return collect(spawnPiw(home, args, options));
}

/** Stop the host a test started (it was detached, so it outlives the CLI), then remove its folder. */
export async function cleanUp(home: string): Promise<void> {
  const pid = hostPidIn(home);
  if (pid !== undefined && isAlive(pid)) {
    process.kill(pid, "SIGTERM");
    await waitFor("the host to stop", () => !isAlive(pid), 10_000).catch(() => process.kill(pid, "SIGKILL"));
  }
  removeTree(home);
}

/** The run ID `piw run` printed in its first line. */
export function runIdIn(output: string): string {
  // `--detach` without a terminal prints just the ID.
  const bare = /^([a-z0-9][a-z0-9._-]*-[a-z0-9]+-[a-f0-9]{8})\n?$/.exec(output);
  if (bare?.[1]) return bare[1];
  const match = /run ([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(output);
  if (!match?.[1]) throw new Error(`no run ID in: ${output}`);
  return match[1];
}

/** The CLI's own entry function in this process, for commands that never reach a host. */
export async function piwInProcess(home: string, args: string[]): Promise<PiwResult> {
  const { runCli } = await import("../src/cli.js");
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    env: {
      PIW_HOME: home,
      PIW_HOST_COMMAND: JSON.stringify(hostCommand),
      PIW_PREFLIGHT_COMMAND: JSON.stringify(preflightCommand),
      TSX_TSCONFIG_PATH: join(repo, "tsconfig.json"),
      NO_COLOR: "1",
    },
    cwd: repo,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: process.stdin,
  });
  return { code, stdout, stderr };
}

/** Shell-quote one argument for `script -c`. */
const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * The real CLI on a pseudo-terminal (util-linux `script`), so it sees a TTY: writing "\x03" to the
 * returned child's stdin is a Ctrl-C. The exit code is the CLI's (`script -e`).
 *
 * `script` runs the command through `$SHELL -c`. dash (the usual /bin/sh) forks for it instead of
 * replacing itself, and a Ctrl-C then kills the waiting shell too: `script` would report 130
 * whatever the CLI returned. `exec` makes the CLI the shell's own process under any shell.
 */
export function spawnPiwInTerminal(home: string, args: string[], options: PiwOptions = {}): ChildProcess {
  return spawnInTerminal(home, `exec ${cliCommand(args)}`, options);
}

const cliCommand = (args: string[]) =>
  [process.execPath, "--import", tsx, cliEntry, ...args].map(quote).join(" ");

function spawnInTerminal(home: string, command: string, options: PiwOptions): ChildProcess {
  const script = ["script", "-qfec", command, "/dev/null"];
  const argv =
    options.parentTitle === undefined
      ? script
      : [process.execPath, "-e", WITH_TITLE, options.parentTitle, ...script];
  const [file = "script", ...args] = argv;
  return spawn(file, args, {
    cwd: options.cwd ?? repo,
    env: { ...piwEnv(home, options.env ?? {}), SHELL: "/bin/sh" },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** A parent that takes a process title, as Pi does (`pi`), then runs the rest of its argv and exits with it. */
const WITH_TITLE = `process.title = process.argv[1];
const ran = require("node:child_process").spawnSync(process.argv[2], process.argv.slice(3), { stdio: "inherit" });
process.exit(ran.status ?? 1);`;

/**
 * The real CLI with a controlling terminal (a pseudo-terminal, as a person's), its stdout and stderr
 * still plain files: the same output as `piw`, for `piw answer`, which runs only from a terminal.
 */
export async function piwAtTerminal(
  home: string,
  args: string[],
  options: PiwOptions = {},
): Promise<PiwResult> {
  const folder = mkdtempSync(join(tmpdir(), "piw-tty-"));
  const [out, err] = [join(folder, "stdout"), join(folder, "stderr")];
  try {
    const unset = (options.unsetInTerminal ?? []).map((name) => `-u ${quote(name)} `).join("");
    const command = `exec env ${unset}${cliCommand(args)} >${quote(out)} 2>${quote(err)}`;
    const child = spawnInTerminal(home, command, options);
    const { code } = await collect(child);
    return { code, stdout: readFileSync(out, "utf8"), stderr: readFileSync(err, "utf8") };
  } finally {
    removeTree(folder);
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
export const withoutAnsi = (text: string) => text.replace(ANSI, "");
// biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR (colour) escape is what this finds.
const SGR = /\u001b\[[0-9;]*m/;
export const hasColour = (text: string) => SGR.test(text);
