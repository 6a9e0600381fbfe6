import { type RunCommand, type RunRecord, type SafeError, safeError } from "@piw/protocol";
import type { CompiledWorkflow } from "../compiler/compiled-workflow.js";
import type { RunPort } from "./run-port.js";

/**
 * The run's workflow, loaded by whoever runs the command (the worker from the saved source, the
 * embedded runtime from what its caller compiled). An expected failure is a result; `debug` is the
 * raw text of what went wrong, for a local debug log only.
 */
export type WorkflowLoad =
  | { ok: true; value: CompiledWorkflow }
  | { ok: false; error: SafeError; debug?: string };

export interface AcceptCommandOptions {
  command: RunCommand;
  port: RunPort;
  /** Called only once the run is `running`: workflow code never runs for a refused command. */
  load(): Promise<WorkflowLoad>;
}

/**
 * How accepting a run command ended. A refusal has already ended the run `failed` through the
 * command's own fence (a stale command's fence changes nothing); `stage` says whether any workflow
 * code was loaded.
 */
export type CommandAcceptance =
  | { kind: "accepted"; workflow: CompiledWorkflow }
  | { kind: "refused"; stage: "command" | "workflow"; error: SafeError; debug?: string };

/** Whether the command is the one the saved run expects next; the refusal says why not. */
function commandProblem(command: RunCommand, run: RunRecord): SafeError | null {
  if (run.status !== "starting")
    return safeError("activation_failed", `Run ${run.runId} is ${run.status}, not starting.`);
  if (run.generation !== command.generation) {
    return safeError("activation_failed", `Run ${run.runId} was claimed again; this command is stale.`);
  }
  if (run.nextCommand !== command.type) {
    return safeError(
      "activation_failed",
      `Run ${run.runId} expects a ${run.nextCommand} command, not ${command.type}.`,
    );
  }
  switch (command.type) {
    case "start":
    case "resume":
      return null;
    case "continue":
      return run.originCommand === "continue" && run.parentRunId === command.parentRunId
        ? null
        : safeError("activation_failed", `Run ${run.runId} is not a continuation of ${command.parentRunId}.`);
    case "restart":
      return run.originCommand === "restart" &&
        run.parentRunId === command.parentRunId &&
        run.restartNumber === command.restartNumber
        ? null
        : safeError(
            "activation_failed",
            `Run ${run.runId} is not restart ${command.restartNumber} of ${command.parentRunId}.`,
          );
    default:
      return command satisfies never;
  }
}

/** Whether the loaded workflow is the prepared one: same name, same compiled digest. */
function workflowProblem(workflow: CompiledWorkflow, run: RunRecord): SafeError | null {
  if (workflow.name !== run.workflowName) {
    return safeError(
      "source_changed",
      `The workflow's name (now "${workflow.name}", was "${run.workflowName}") changed since the run was prepared.`,
    );
  }
  if (workflow.digest !== run.definitionDigest) {
    return safeError(
      "source_changed",
      `The definition of workflow ${run.workflowName} changed since the run was prepared.`,
    );
  }
  return null;
}

/**
 * Accept a run command: the one rule for the worker and the embedded runtime alike. The command is
 * checked against the saved run and the run marked `running` before any workflow code is loaded;
 * then the workflow must be the prepared definition. Any refusal ends the run failed with its error.
 */
export async function acceptRunCommand(options: AcceptCommandOptions): Promise<CommandAcceptance> {
  const { command, port } = options;
  const refuse = async (
    stage: "command" | "workflow",
    error: SafeError,
    debug?: string,
  ): Promise<CommandAcceptance> => {
    await port.finishRun({ outcome: "failed", error });
    return { kind: "refused", stage, error, ...(debug === undefined ? {} : { debug }) };
  };
  const run = await port.readRun();
  if (!run) return refuse("command", safeError("workflow_not_found", `Run ${command.runId} does not exist.`));
  const problem = commandProblem(command, run);
  if (problem) return refuse("command", problem);
  const accepted = await port.markRunning();
  if (accepted.kind !== "applied" && accepted.kind !== "adopted") {
    return refuse(
      "command",
      safeError("activation_failed", `Run ${command.runId} could not be marked running (${accepted.kind}).`),
    );
  }
  const loaded = await options.load();
  if (!loaded.ok) return refuse("workflow", loaded.error, loaded.debug);
  const changed = workflowProblem(loaded.value, run);
  if (changed) return refuse("workflow", changed);
  return { kind: "accepted", workflow: loaded.value };
}
