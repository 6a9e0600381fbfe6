import type { LaunchRefused, LoadedWorkflow, PreparedLaunch } from "@piw/engine";
import type { CallParams } from "@piw/client";
import type { JsonValue, SourceIdentity } from "@piw/protocol";
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
}

export type PreparedRun = PreparedLaunch;

// Loaded on demand: only some commands compile workflows, and the engine is the CLI's heaviest import.
const engine = () => import("@piw/engine");

function refusal(error: LaunchRefused): CliError {
  return new CliError(
    error.message,
    error.usage ? ExitCode.usage : ExitCode.failed,
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
 * Everything `piw run` checks before the host saves anything (seed 003): the workflow resolves and
 * compiles, it can run without Pi, and the input matches its schema. A failure throws a CliError.
 */
export async function preflight(request: PreflightRequest): Promise<PreparedRun> {
  const { agentStepPaths, loadForLaunch, prepareInput } = await engine();
  const loaded: LoadedWorkflow = await refusingWith(() => loadForLaunch(request.ref, request.cwd));
  const agentSteps = agentStepPaths(loaded);
  if (agentSteps.length > 0) {
    throw new CliError(
      `workflow ${loaded.name} has agent steps (${agentSteps.join(", ")}): agent steps need a Pi session; ` +
        `start it from Pi with /workflow ${loaded.name} <task>`,
      ExitCode.usage,
    );
  }
  const input =
    request.inputJson === undefined ? undefined : parseJsonArgument(request.inputJson, "--input-json");
  return refusingWith(() => prepareInput(loaded, { task: request.words.join(" "), input }));
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

/** The `runs.reserve` request for a prepared run started from the CLI in `cwd`, where its commands run. */
export async function reserveParams(prepared: PreparedRun, cwd: string): Promise<CallParams<"runs.reserve">> {
  const { reserveRequest } = await engine();
  return reserveRequest(prepared, { origin: { kind: "cli" }, workingDir: cwd });
}
