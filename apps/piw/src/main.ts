#!/usr/bin/env node
import { runCli } from "./cli.js";

// A closed pipe (`piw list | head`) is not an error worth a stack.
process.stdout.on("error", () => {});

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
// Exit now: a detached host, a paused stdin or a jiti cache must not keep `piw` waiting.
process.stdout.write("", () => process.exit(code));
