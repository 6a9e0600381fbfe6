import { HostUnavailable } from "@piw/client";
import { PIW_ENV } from "@piw/state-dir";
import { RpcError } from "@piw/protocol";
import { CliContext, type CliIo } from "./cli-context.js";
import { CliError, usageError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";
import { errorOutput } from "./output-schemas.js";
import { packageVersion } from "./package-version.js";
import { COMMAND_USAGE, type CommandName, MAIN_USAGE } from "./usage.js";

type CommandHandler = (ctx: CliContext, args: string[]) => Promise<ExitCode>;

/**
 * Each command's modules load when it runs, not before: `piw list` never loads the viewer (and Pi's
 * TUI library), the follower or the preflight. A command missing here is a compile error: every name
 * in COMMAND_USAGE has a loader.
 */
const COMMANDS: { [K in CommandName]: () => Promise<CommandHandler> } = {
  run: async () => (await import("./commands/run.js")).runCommand,
  list: async () => (await import("./commands/list.js")).listCommand,
  status: async () => (await import("./commands/status.js")).statusCommand,
  cancel: async () => (await import("./commands/control.js")).cancelCommand,
  pause: async () => (await import("./commands/control.js")).pauseCommand,
  answer: async () => (await import("./commands/control.js")).answerCommand,
  restart: async () => (await import("./commands/control.js")).restartCommand,
  resume: async () => (await import("./commands/control.js")).resumeCommand,
  host: async () => (await import("./commands/host.js")).hostCommand,
  herdr: async () => (await import("./commands/herdr.js")).herdrCommand,
  schedule: async () => (await import("./commands/schedule.js")).scheduleCommand,
  view: async () => (await import("./commands/view.js")).viewCommand,
  workflows: async () => (await import("./commands/workflows.js")).workflowsCommand,
};

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** Run one `piw` invocation; resolves with its exit code. Every failure is printed as short lines. */
export function runCli(argv: string[], io: CliIo): Promise<ExitCode> {
  return withCliContext(argv, io, (ctx) => dispatch(ctx, argv));
}

async function dispatch(ctx: CliContext, argv: string[]): Promise<ExitCode> {
  const { io } = ctx;
  const [name, ...args] = argv;
  // Bare `piw` in a terminal opens the viewer; anywhere else it prints the usage.
  if (name === undefined && ctx.interactive && io.stdout.isTTY === true) {
    return await (await COMMANDS.view())(ctx, []);
  }
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? args[0] : undefined;
    ctx.print(topic !== undefined && isCommand(topic) ? COMMAND_USAGE[topic] : MAIN_USAGE);
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === "--version" || name === "-V") {
    ctx.print(packageVersion());
    return ExitCode.ok;
  }
  if (!isCommand(name)) throw usageError(`unknown command ${JSON.stringify(name)}`);
  return await (await COMMANDS[name]())(ctx, args);
}

/**
 * Run `action` as the command `argv`, in a context of its own: every failure is printed as short lines
 * (and as JSON with --json); resolves with the exit code. A quick route hands its command over here.
 */
export async function withCliContext(
  argv: readonly string[],
  io: CliIo,
  action: (ctx: CliContext) => Promise<ExitCode>,
): Promise<ExitCode> {
  const ctx = new CliContext(io);
  try {
    return await action(ctx);
  } catch (error) {
    const lines: string[] = [];
    const code = report(ctx, error, lines);
    // A script that asked for JSON gets the failure as JSON too (the same lines stay on stderr).
    if (wantsJson(argv)) ctx.printJson(errorOutput(code, lines[0] ?? "", lines.slice(1)));
    return code;
  } finally {
    ctx.close();
  }
}

/** `--json` among the options (not after `--`, where task words start). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}

/** Print a failure as short lines on stderr (and into `said`); returns the exit code it means. */
function report(ctx: CliContext, error: unknown, said: string[]): ExitCode {
  const style = ctx.errStyle;
  const say = (line: string) => {
    said.push(line);
    ctx.warn(`${style.red("piw:")} ${line}`);
  };
  if (error instanceof CliError) {
    say(error.message);
    for (const line of error.details) {
      said.push(line);
      ctx.warn(line);
    }
    return error.exitCode;
  }
  if (error instanceof HostUnavailable) {
    say(error.message);
    return ExitCode.hostUnavailable;
  }
  if (error instanceof RpcError) {
    switch (error.code) {
      case "protocol_mismatch":
        say(`the running host speaks another protocol: ${error.message} (stop it with piw host stop)`);
        return ExitCode.hostUnavailable;
      case "store_unavailable":
        say(`the host cannot use its state: ${error.message}`);
        return ExitCode.hostUnavailable;
      case "answer_invalid":
        say(error.message);
        return ExitCode.usage;
      default:
        say(error.message);
        return ExitCode.failed;
    }
  }
  const detail = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
  say(`unexpected error: ${detail}`);
  if (ctx.io.env[PIW_ENV.debug.name] && error instanceof Error && error.stack) ctx.warn(error.stack);
  return ExitCode.failed;
}
