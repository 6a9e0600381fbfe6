import {
  boundSafeMessage,
  type RecoveryReason,
  type RunCommand,
  type RunRecord,
  type SafeError,
  type SourceIdentity,
  safeError,
} from "@piw/protocol";
import type { CompiledWorkflow } from "../compiler/compiled-workflow.js";
import { resumeProblem } from "../compiler/resume-compatibility.js";
import { expectSaved } from "./execution-signals.js";
import type { RunPort } from "./run-port.js";

/**
 * The run's workflow, loaded by whoever runs the command (the worker from the saved source, the
 * embedded runtime from what its caller compiled). An expected failure is a result; `debug` is the
 * raw text of what went wrong, for a local debug log only.
 */
export type WorkflowLoad =
  /** `source`: where a load that accepted changes found the workflow now (its new sha256). */
  | { ok: true; value: CompiledWorkflow; source?: SourceIdentity }
  | { ok: false; error: SafeError; debug?: string };

export interface AcceptCommandOptions {
  command: RunCommand;
  port: RunPort;
  /**
   * Called only once the run is `running`: workflow code never runs for a refused command. With
   * `acceptChanges`, the source may have changed since the run was prepared: load it as it is now.
   */
  load(how: { acceptChanges: boolean }): Promise<WorkflowLoad>;
}

/**
 * How accepting a run command ended. A refusal has already ended the run `failed` through the
 * command's own fence (a stale command's fence changes nothing); `stage` says whether any workflow
 * code was loaded.
 */
export type CommandAcceptance =
  | { kind: "accepted"; workflow: CompiledWorkflow }
  /** A resume that accepted changes found they do not fit the saved position: parked again, nothing ran. */
  | { kind: "parked"; reason: RecoveryReason }
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
  const acceptChanges = command.type === "resume" && command.acceptChanges === true;
  const loaded = await options.load({ acceptChanges });
  if (!loaded.ok) return refuse("workflow", loaded.error, loaded.debug);
  if (acceptChanges) return adoptChanges(port, run, loaded.value, loaded.source ?? run.source);
  const changed = workflowProblem(loaded.value, run);
  if (changed) return refuse("workflow", changed);
  return { kind: "accepted", workflow: loaded.value };
}

/**
 * A person resumed the run on its workflow as it is now (`piw resume --accept-changes`). When the saved
 * position fits the changed definition, the run follows it from now on; otherwise the run parks again
 * with the reason, and a resume on the restored file (or a fixed one) can still continue it.
 */
async function adoptChanges(
  port: RunPort,
  run: RunRecord,
  workflow: CompiledWorkflow,
  source: SourceIdentity,
): Promise<CommandAcceptance> {
  const unchanged = workflow.digest === run.definitionDigest && sameSource(source, run.source);
  if (unchanged) return { kind: "accepted", workflow };
  const problem =
    workflow.name === run.workflowName
      ? resumeProblem(workflow, await port.loadSnapshot())
      : `its name is now "${workflow.name}", not "${run.workflowName}"`;
  if (problem !== null) {
    const reason: RecoveryReason = {
      code: "changes_refused",
      message: boundSafeMessage(`The changed workflow cannot continue this run: ${problem}.`),
    };
    expectSaved(await port.parkRun(reason));
    return { kind: "parked", reason };
  }
  expectSaved(
    await port.redefineRun({
      workflowName: workflow.name,
      source,
      definitionDigest: workflow.digest,
      manifest: workflow.manifest as never,
    }),
  );
  return { kind: "accepted", workflow };
}

function sameSource(a: SourceIdentity, b: SourceIdentity): boolean {
  return a.kind === "file" && b.kind === "file"
    ? a.path === b.path && a.sha256 === b.sha256
    : a.kind === "builtin" && b.kind === "builtin" && a.id === b.id && a.revision === b.revision;
}
