import type { LoadedWorkflow } from "@piw/engine";
import type { ClientParams, JsonValue, SourceIdentity } from "@piw/protocol";
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

export interface PreparedRun {
  loaded: LoadedWorkflow;
  input: JsonValue;
  /** Said before the run starts, e.g. that task words were ignored. */
  notes: string[];
}

/**
 * Everything `piw run` checks before the host saves anything (seed 003): the workflow resolves and
 * compiles, it can run without Pi, and the input matches its schema. A failure throws a CliError.
 */
export async function preflight(request: PreflightRequest): Promise<PreparedRun> {
  const loaded = await loadWorkflow(request.ref, request.cwd);
  const { workflow } = loaded;

  const agentSteps = workflow.manifest.nodes.filter((node) => node.kind === "agent").map((node) => node.path);
  if (agentSteps.length > 0) {
    throw new CliError(
      `workflow ${loaded.name} has agent steps (${agentSteps.join(", ")}): agent steps need a Pi session; ` +
        `start it from Pi with /workflow ${loaded.name} <task>`,
      ExitCode.usage,
    );
  }

  const notes: string[] = [];
  const given = request.inputJson !== undefined || request.words.length > 0;
  let input: JsonValue;
  if (request.inputJson !== undefined) {
    input = parseJsonArgument(request.inputJson, "--input-json");
  } else if (workflow.inputSchema === undefined) {
    if (request.words.length > 0)
      notes.push(`workflow ${loaded.name} takes no input; ignoring the task words`);
    input = null;
  } else {
    input = request.words.length > 0 ? { task: request.words.join(" ") } : {};
  }

  if (workflow.inputSchema !== undefined) {
    const checked = await workflow.inputSchema.safeParseAsync(input);
    if (!checked.success) {
      const problems = checked.error.issues.map((issue) => `  ${issuePath(issue.path)}: ${issue.message}`);
      if (!given)
        problems.push("  (no input was given: pass task words, or the whole input with --input-json)");
      throw new CliError(
        `the input does not match workflow ${loaded.name}'s input:`,
        ExitCode.usage,
        problems,
      );
    }
  }
  return { loaded, input, notes };
}

async function loadWorkflow(ref: string, cwd: string): Promise<LoadedWorkflow> {
  // Loaded on demand: only `run` compiles workflows, and the engine is the CLI's heaviest import.
  const { resolveWorkflow, WorkflowLoadError } = await import("@piw/engine");
  try {
    return await resolveWorkflow(ref, { cwd });
  } catch (error) {
    if (!(error instanceof WorkflowLoadError)) throw error;
    if (error.problems.length === 0) throw new CliError(error.message);
    throw new CliError(
      `workflow ${ref} is invalid:`,
      ExitCode.failed,
      error.problems.map((problem) => `  ${problem.path}: ${problem.message}`),
    );
  }
}

/**
 * Check a checkpoint answer against the checkpoint's schema before the host saves a continuation:
 * a wrong answer must be correctable, not burn the checkpoint (seed 003 preflight).
 */
export async function checkAnswer(
  source: SourceIdentity,
  checkpointPath: string,
  answer: JsonValue,
  cwd: string,
): Promise<void> {
  if (source.kind !== "file") return;
  const loaded = await loadWorkflow(source.path, cwd);
  const node = loaded.workflow.nodes.get(checkpointPath);
  if (node?.kind !== "checkpoint") {
    throw new CliError(
      `workflow ${loaded.name} has no checkpoint ${checkpointPath} any more (its source changed)`,
    );
  }
  const checked = await node.answer.safeParseAsync(answer);
  if (!checked.success) {
    throw new CliError(
      `the answer does not match checkpoint ${checkpointPath}:`,
      ExitCode.usage,
      checked.error.issues.map((issue) => `  ${issuePath(issue.path)}: ${issue.message}`),
    );
  }
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

function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(input)";
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("");
}

/** The `runs.reserve` request for a prepared run started from the CLI in `cwd`, where its commands run. */
export function reserveParams(prepared: PreparedRun, cwd: string): ClientParams<"runs.reserve"> {
  const { loaded, input } = prepared;
  return {
    workflowName: loaded.name,
    source: loaded.source,
    definitionDigest: loaded.workflow.digest,
    manifest: loaded.workflow.manifest as unknown as JsonValue,
    input,
    origin: { kind: "cli" },
    workingDir: cwd,
    ...(loaded.workflow.presentationPrompt === undefined
      ? {}
      : { presentationInstructions: loaded.workflow.presentationPrompt }),
  };
}
