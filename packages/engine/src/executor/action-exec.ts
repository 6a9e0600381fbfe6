import { resolve } from "node:path";
import type {
  ActionContext,
  ActionExecOptions,
  CompiledNode,
  CompiledWorkflow,
  ShellReport,
} from "../compiler/compiled-workflow.js";
import { shellCommandOf } from "../compiler/compile-node.js";
import { NodeFailure } from "./execution-signals.js";
import { runWorkspace } from "./run-workspace.js";
import { type DebugLog, toSafeError } from "./safe-failure.js";
import { runShell } from "./shell-runner.js";

// `ctx.exec`: an action's commands, run the way a shell node's are, so an effect's `fn` can be a
// command (a push, an API call through a CLI) without the author reaching for child_process.

/** A folder: `own` taken relative to the run's workspace when there is one, else as given. */
export function commandCwd(own: string | undefined, workspace: string | null): string | undefined {
  if (workspace === null) return own;
  return own === undefined ? workspace : resolve(workspace, own);
}

/** What `ctx.exec` needs of its node visit. */
interface ExecPlace {
  workflow: CompiledWorkflow;
  node: CompiledNode;
  outputsByPath: ReadonlyMap<string, unknown>;
  env?: Readonly<Record<string, string>>;
  onProcessGroup?: (pgid: number, alive: boolean) => void;
  debug?: DebugLog;
}

export function actionExec(run: ExecPlace, signal: AbortSignal): ActionContext["exec"] {
  const subject = `a command of ${run.node.path}`;
  return async (exec, options: ActionExecOptions = {}): Promise<ShellReport> => {
    const command = shellCommandOf(exec);
    if (command === undefined) {
      throw new NodeFailure("node_failed", `ctx.exec of ${run.node.path} got an invalid command.`);
    }
    const cwd = commandCwd(options.cwd, runWorkspace(run.workflow, run.node, run.outputsByPath));
    let result: Awaited<ReturnType<typeof runShell>>;
    try {
      result = await runShell({
        command,
        ...(cwd === undefined ? {} : { cwd }),
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(run.env === undefined ? {} : { baseEnv: run.env }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(run.onProcessGroup ? { onProcessGroup: run.onProcessGroup } : {}),
        signal,
      });
    } catch (error) {
      // A spawn error names the program, which may come from the input.
      const failure = toSafeError(error, { code: "node_failed", subject: `Starting ${subject}` });
      run.debug?.(failure.debug);
      throw new NodeFailure(failure.error.code, failure.error.message);
    }
    if (result.aborted) throw new NodeFailure("cancelled", `A command of ${run.node.path} was stopped.`);
    if (result.timedOut) {
      throw new NodeFailure("node_failed", `A command of ${run.node.path} ran past ${options.timeoutMs} ms.`);
    }
    if (result.exitCode === null) {
      throw new NodeFailure("node_failed", `A command of ${run.node.path} was killed by ${result.signal}.`);
    }
    return {
      exitCode: result.exitCode,
      stdout: result.stdout.trimEnd(),
      stderr: result.stderrTail.trimEnd(),
    };
  };
}
