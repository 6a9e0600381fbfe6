import { dispatchPushes, workerPushes } from "@piw/protocol";
import { PIW_ENV } from "@piw/state-dir";
import { type CrashHook, crashHookFromEnv } from "./crash-hook.js";
import { WORKER_EXIT_CODES, WorkerRun } from "./run-worker.js";
import { openStdioChannel } from "./stdio-channel.js";

/**
 * The launch this process is, when it is started for one launch (test harnesses). The host starts its
 * workers ahead of time without it and names the launch in the `assign` push instead; either way the
 * host expects it back in `worker.hello`.
 */
const LAUNCH_ID_ENV = PIW_ENV.launchId.name;

type Assignment = { launchId: string; workingDir: string | null };

function logLine(line: string): void {
  process.stderr.write(`piw-worker: ${line}\n`);
}

/** Usage problems end the process before it speaks on the channel at all. */
function refuseToStart(message: string): never {
  logLine(message);
  process.exit(WORKER_EXIT_CODES.failed);
}

/** Move to the run's directory, where its shell steps run; the host's fallback if it has just gone. */
function enterWorkingDir(workingDir: string | null): void {
  if (workingDir === null) return;
  try {
    process.chdir(workingDir);
  } catch (error) {
    logLine(
      `cannot enter the run's directory (${(error as NodeJS.ErrnoException).code ?? "error"}); staying here`,
    );
  }
}

/**
 * The `piw-worker` process: one run command from the host over stdio, executed to its next stop.
 * Started ahead of time, it waits (loaded, idle) for the host's `assign` push before it says hello.
 * Exits 0 after a reported exit, 1 after a reported failure (or a usage error), 2 when the host
 * channel closes — at once, aborting the execution so a running shell node's process group dies too.
 */
export async function runWorkerProcess(): Promise<never> {
  if (process.stdin.isTTY) refuseToStart("the piw host starts this process; it is not run by hand.");
  let crash: CrashHook;
  try {
    crash = crashHookFromEnv(process.env);
  } catch (error) {
    refuseToStart((error as Error).message);
  }

  let assign: (assignment: Assignment) => void = () => {};
  const assigned = new Promise<Assignment>((resolve) => {
    assign = resolve;
  });
  const envLaunchId = process.env[LAUNCH_ID_ENV];
  if (envLaunchId) assign({ launchId: envLaunchId, workingDir: null });

  const execution = new AbortController();
  const abandon = () => {
    // Aborting runs the shell runner's listener synchronously: the process group is killed before we exit.
    execution.abort(new Error("The host channel closed."));
    process.exit(WORKER_EXIT_CODES.channelLost);
  };
  const peer = openStdioChannel({
    onPush: dispatchPushes(
      workerPushes,
      {
        // Only the first assignment counts (a second would be a host bug; the hello shows which won).
        assign,
        cancel: ({ reason }) => execution.abort(new Error(`Cancelled by the host: ${reason}`)),
        // Its work is done by the time the channel reads it: it ended the wait before the modules loaded.
        wake: () => {},
      },
      (push) => {
        // A cancel stays a cancel even when its reason is unreadable.
        if (push === "cancel") execution.abort(new Error("Cancelled by the host: cancelled"));
        else logLine(`ignored an invalid ${push} frame`);
      },
    ),
    onLost: abandon,
  });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, abandon);

  // Idle until the host hands this process a launch (the channel's loss exits it meanwhile). Node's
  // TypeScript stripper (15 MiB resident) is not warmed here: it loads with the run's workflow file.
  const { launchId, workingDir } = await assigned;
  enterWorkingDir(workingDir);
  // As if started for this launch: workflow code and the commands it runs see which launch they are in.
  process.env[LAUNCH_ID_ENV] = launchId;

  const run = new WorkerRun({
    peer,
    launchId,
    pid: process.pid,
    signal: execution.signal,
    crash,
    log: logLine,
    // The worker's stderr is its local debug log (the host copies its lines into the host's own log).
    debug: (line) => logLine(`debug: ${line}`),
  });
  // Leaving with a node still running must not leave its shell commands behind. The report goes
  // first: once the host has it, whatever the aborted node still tries to save is refused.
  const exit = (code: number): never => {
    execution.abort(new Error("The worker is exiting."));
    process.exit(code);
  };
  // Workflow code runs here: a throw from its timers or promises is a reported worker failure.
  const fatal = (error: unknown) => {
    void run.fail(error).then(exit);
  };
  process.on("uncaughtException", fatal);
  process.on("unhandledRejection", fatal);

  return exit(await run.run());
}
