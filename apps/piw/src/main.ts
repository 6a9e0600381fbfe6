#!/usr/bin/env node
// piw: check Node before anything that needs 22.19 loads; the CLI itself loads on demand (cli.js).
import { exitUnlessNodeFits } from "@piw/node-version";
import { defaultStateDir, useStateCompileCache } from "@piw/state-dir";
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
  // Plain `piw list` (or `piw list --json`) and `piw status <runId>` against a running host take a
  // route that builds no zod schemas (see quickList, quickStatus).
  if (await quickRoute(stateDir)) process.stdout.write("", () => process.exit(0));
  else await runCliAndExit();
}

/** Whether the command was served by a quick route; false when the full CLI must run it. */
async function quickRoute(stateDir: string): Promise<boolean> {
  const [command, first, ...rest] = argv;
  if (command === "list" && rest.length === 0 && (first === undefined || first === "--json")) {
    const { quickList } = await import("./quick-list-command.js");
    return quickList(stateDir, process.stdout, process.env, first === "--json");
  }
  if (command === "status" && rest.length === 0 && first !== undefined && !first.startsWith("-")) {
    const { quickStatus } = await import("./quick-status-command.js");
    return quickStatus(stateDir, process.stdout, process.env, first);
  }
  return false;
}

async function runCliAndExit(): Promise<void> {
  // A command checks a few replies with each schema: zod's generated fast path costs more to build
  // (tens of ms at start) than it saves. Set before any schema is built, which reads it. The viewer
  // (`piw view`, bare `piw`) checks a push per change for as long as it runs, and keeps it.
  if (argv.length > 0 && argv[0] !== "view") (await import("zod")).config({ jitless: true });
  const { runCli } = await import("./cli.js");
  const code = await runCli(argv, {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
  });
  // Exit now: a detached host, a paused stdin or a jiti cache must not keep `piw` waiting.
  process.stdout.write("", () => process.exit(code));
}
