import type { CallParams } from "@piw/client";
import type { LaunchRefused, PreflightOptions } from "@piw/engine/launcher";
import { type Budget, captureRunEnv, type JsonValue, mergeBudget, type PreflightLaunch } from "@piw/protocol";
import { defaultStateDir, PREFLIGHT_ENTRY } from "@piw/state-dir";
import { builtAppEntry } from "./built-app-entry.js";
import { CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";

export interface PreflightRequest {
  /** A workflow name or a path to a `<name>.workflow.ts` file. */
  ref: string;
  cwd: string;
  /** Task words; they become `{ task: "<words joined>" }`. */
  words: readonly string[];
  /** `--input-json`, when given: the whole input. */
  inputJson: string | undefined;
  /**
   * Whether agent steps may run: a schedule's runs run theirs isolated; a `piw run` refuses a step
   * pinned to the conversation (the default: no).
   */
  agentSteps?: boolean;
}

export type PreparedRun = PreflightLaunch;

// Loaded on demand: only some commands preflight workflows. The launcher entry holds no loader: it
// cannot evaluate a workflow in this process, and it spares `piw run` the rest of the engine.
const engine = () => import("@piw/engine/launcher");

function refusal(error: LaunchRefused): CliError {
  // A name that finds no workflow is a mistake in the command, like bad input.
  const usage = error.usage || error.code === "workflow_not_found";
  return new CliError(
    error.message,
    usage ? ExitCode.usage : ExitCode.failed,
    error.problems.map((problem) => `  ${problem}`),
  );
}

/** Run `step`, turning a launch refusal into the CLI's error (and exit code). */
async function refusingWith<T>(step: () => Promise<T>): Promise<T> {
  const { LaunchRefused } = await engine();
  try {
    return await step();
  } catch (error) {
    if (error instanceof LaunchRefused) throw refusal(error);
    throw error;
  }
}

/**
 * How to start the preflight child: `PIW_PREFLIGHT_COMMAND` (a JSON argv), else the built worker app's
 * `dist/preflight.js`; `PIW_PREFLIGHT_TIMEOUT_MS` bounds it (default 10 s).
 */
export async function preflightOptions(env: NodeJS.ProcessEnv): Promise<PreflightOptions> {
  const settings = (await engine()).readPreflightEnv(env);
  if (settings.kind === "invalid") throw new CliError(settings.message, ExitCode.usage);
  return {
    command: settings.command ?? [
      process.execPath,
      builtAppEntry(PREFLIGHT_ENTRY, "worker", ExitCode.failed),
    ],
    timeoutMs: settings.timeoutMs,
    env,
    // An unchanged workflow file is not evaluated again: its prepared launch is reused.
    stateDir: defaultStateDir(env),
  };
}

/**
 * Everything `piw run` checks before the host saves anything (preflight rule): the workflow resolves and
 * compiles, it can run without Pi, and the input matches its schema. The workflow is loaded in a
 * short-lived child process with a time limit, so its code cannot end or hang `piw`. A failure throws a
 * CliError.
 */
export async function preflight(request: PreflightRequest, env: NodeJS.ProcessEnv): Promise<PreparedRun> {
  const input =
    request.inputJson === undefined ? undefined : parseJsonArgument(request.inputJson, "--input-json");
  const { preflightLaunch } = await engine();
  const options = await preflightOptions(env);
  return refusingWith(() =>
    preflightLaunch(
      {
        ref: request.ref,
        cwd: request.cwd,
        task: request.words.join(" "),
        input,
        piSession: request.agentSteps === true,
      },
      options,
    ),
  );
}

/** Parse a JSON command-line argument; a syntax error is a usage error naming the argument. */
export function parseJsonArgument(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "unreadable";
    throw new CliError(`${what} is not valid JSON: ${reason}`, ExitCode.usage);
  }
}

/**
 * The `runs.reserve` request for a prepared run started from the CLI in `cwd`, where its commands run,
 * with this shell's environment, which they run in (saved with the run, privately, like its input).
 */
export function reserveParams(
  prepared: PreparedRun,
  where: { cwd: string; env: NodeJS.ProcessEnv; budget?: Budget | undefined },
): CallParams<"runs.reserve"> {
  const env = captureRunEnv(where.env);
  if (!env.ok) throw new CliError(env.error.message, ExitCode.usage);
  // A run started from a shell has no model to tell how it ended.
  const {
    title: _title,
    notes: _notes,
    agentSteps: _agentSteps,
    notifyModel: _notify,
    ...reserve
  } = prepared;
  // The start's limits go over the workflow's own.
  const budget = mergeBudget(reserve.budget ?? null, where.budget);
  return {
    ...reserve,
    ...(budget === null ? {} : { budget }),
    origin: { kind: "cli" },
    workingDir: where.cwd,
    env: env.env,
  };
}
