#!/usr/bin/env node
// piw: check Node before anything that needs 22.19 loads; the CLI itself loads on demand (cli.js).
import { exitUnlessNodeFits } from "@piw/node-version";
import { defaultStateDir, useStateCompileCache } from "@piw/state-dir";
import { loadCli } from "./load-cli.js";
import { packageVersion } from "./package-version.js";

exitUnlessNodeFits("piw");

// A closed pipe (`piw list | head`) is not an error worth a stack.
process.stdout.on("error", () => {});

const argv = process.argv.slice(2);
// `piw --version` answers before the CLI and its dependencies load (a third of a second of imports).
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${packageVersion()}\n`, () => process.exit(0));
} else {
  // V8's code cache for the CLI's modules saves a part of every start. piw shares the workers' cache,
  // once the host's workers have made it in the private state folder; piw itself creates nothing there.
  const stateDir = defaultStateDir(process.env);
  useStateCompileCache(stateDir);
  // Plain `piw list` (or `piw list --json`), `piw status <runId>` and `piw run <workflow> [words]`
  // against a running host take a route that builds no zod schemas (see quickList, quickStatus, quickRun).
  const quick = await quickRoute(stateDir);
  if (quick !== undefined) process.stdout.write("", () => process.exit(quick));
  else await runCliAndExit();
}

/** The exit code of the command served by a quick route; undefined when the full CLI must run it. */
async function quickRoute(stateDir: string): Promise<number | undefined> {
  const [command, first, ...rest] = argv;
  if (command === "list" && rest.length === 0 && (first === undefined || first === "--json")) {
    const { quickList } = await import("./quick-list-command.js");
    return (await quickList(stateDir, process.stdout, process.env, first === "--json")) ? 0 : undefined;
  }
  if (command === "status" && rest.length === 0 && first !== undefined && !first.startsWith("-")) {
    const { quickStatus } = await import("./quick-status-command.js");
    return (await quickStatus(stateDir, process.stdout, process.env, first)) ? 0 : undefined;
  }
  // Task words that look like options are the full CLI's to read (or refuse).
  if (command === "run" && first !== undefined && [first, ...rest].every((word) => !word.startsWith("-"))) {
    const { quickRun } = await import("./quick-run-command.js");
    return quickRun(stateDir, argv, cliIo());
  }
  return undefined;
}

function cliIo() {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
  };
}

async function runCliAndExit(): Promise<void> {
  const { runCli } = await loadCli(argv);
  const code = await runCli(argv, cliIo());
  // Exit now: a detached host, a paused stdin or a jiti cache must not keep `piw` waiting.
  process.stdout.write("", () => process.exit(code));
}
