import { type ChildProcess, spawn } from "node:child_process";

/** How a one-request child ended, as seen from outside it. */
export type IpcChildOutcome =
  | { kind: "replied"; message: unknown }
  | { kind: "exited"; exitCode: number | null; signal: NodeJS.Signals | null }
  | { kind: "timed_out"; timeoutMs: number }
  | { kind: "spawn_failed"; reason: string };

export interface IpcChildRequest {
  /** argv of the child; its first word is the file. */
  command: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** The one message sent over IPC. */
  request: object;
  /** Is `raw` the answer to `request` (as opposed to a message the child's own code sends)? */
  answers: (raw: unknown) => boolean;
}

// A signal that ends this process must take the child's group with it: the child is a group leader
// of its own (so a timeout can kill what it spawned) and gets no Ctrl-C from a terminal.
const ENDING_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function killGroup(child: ChildProcess): void {
  // Only while the child is unreaped: its pid, and so its group id, cannot have been reused.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * Sends one request to a short-lived child and waits for its answer, its end or the time limit. The
 * child's stdio is closed (the answer comes over IPC, so nothing it prints reaches anyone), it leads
 * its own process group, and that group is killed once the outcome is known. Resolves once the child
 * is reaped, so a caller that returns finds it gone. Never rejects.
 */
export function askIpcChild(ask: IpcChildRequest): Promise<IpcChildOutcome> {
  const [file, ...args] = ask.command;
  if (file === undefined) return Promise.resolve({ kind: "spawn_failed", reason: "no command" });
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd: ask.cwd,
        env: ask.env,
        stdio: ["ignore", "ignore", "ignore", "ipc"],
        detached: true,
        serialization: "json",
      });
    } catch (error) {
      resolve({ kind: "spawn_failed", reason: (error as NodeJS.ErrnoException).code ?? "spawn error" });
      return;
    }
    let outcome: IpcChildOutcome | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      killGroup(child);
      // Alone, we replaced the default action: restore it and end as the signal meant.
      if (process.listenerCount(signal) === 1) {
        removeGuards();
        process.kill(process.pid, signal);
      }
    };
    const onExit = () => killGroup(child);
    const removeGuards = () => {
      process.off("exit", onExit);
      for (const signal of ENDING_SIGNALS) process.off(signal, onSignal);
    };
    process.on("exit", onExit);
    for (const signal of ENDING_SIGNALS) process.on(signal, onSignal);

    // Decided after the loop's next poll: when this process was too busy to read the pipe for a while
    // (a burst of other work), a reply that came in time is read before the timer is believed.
    const timer = setTimeout(
      () => setImmediate(() => settle({ kind: "timed_out", timeoutMs: ask.timeoutMs })),
      ask.timeoutMs,
    );
    const settle = (result: IpcChildOutcome) => {
      if (outcome !== undefined) return;
      outcome = result;
      clearTimeout(timer);
      killGroup(child);
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) finish();
      else child.once("exit", finish);
    };
    const finish = () => {
      removeGuards();
      if (outcome !== undefined) resolve(outcome);
    };

    child.on("error", (error: NodeJS.ErrnoException) =>
      settle({ kind: "spawn_failed", reason: error.code ?? "spawn error" }),
    );
    child.on("message", (raw: unknown) => {
      if (ask.answers(raw)) settle({ kind: "replied", message: raw });
    });
    // `close`, not `exit`: an answer sent just before the child exits is read before its channel closes.
    child.on("close", (exitCode, signal) => settle({ kind: "exited", exitCode, signal }));
    // A child that dies first makes send fail; its end is reported instead.
    child.send(ask.request, () => {});
  });
}
