import { randomUUID } from "node:crypto";
import { acceptRunCommand, type CompiledWorkflow, type ExecutionOutcome, executeRun } from "@piw/engine";
import {
  type JsonValue,
  newRunId,
  type RunCommand,
  type RunEnv,
  type RunOrigin,
  type SourceIdentity,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { StoreRunPort } from "./store-run-port.js";

export interface EmbeddedStartOptions {
  workflow: CompiledWorkflow;
  source: SourceIdentity;
  input: JsonValue;
  runId?: string;
  origin?: RunOrigin;
  workingDir?: string;
  /**
   * The environment the run's shell commands start from, saved with the run (continuations and
   * restarts keep it); default this process's at the time each command starts. Action code runs in
   * this process and sees its `process.env` either way.
   */
  env?: RunEnv;
}

export interface EmbeddedActivation {
  command: RunCommand;
  port: StoreRunPort;
}

/**
 * The engine and the store in one process, with no host: reserve, claim and execute runs directly.
 * For Node programs that want durable workflows without processes, and for integration tests.
 */
export class EmbeddedRuntime {
  constructor(
    readonly store: RunStore,
    private readonly leaseMs = 30_000,
  ) {}

  /** Queue a run (preflight is the caller's: the workflow is compiled and the input checked). */
  reserve(options: EmbeddedStartOptions): string {
    const runId = options.runId ?? newRunId(options.workflow.name);
    const reserved = this.store.reservePreparedRun({
      runId,
      workflowName: options.workflow.name,
      source: options.source,
      definitionDigest: options.workflow.digest,
      manifest: options.workflow.manifest as unknown as JsonValue,
      input: options.input,
      origin: options.origin ?? { kind: "cli" },
      workingDir: options.workingDir ?? process.cwd(),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.workflow.presentationPrompt === undefined
        ? {}
        : { presentationInstructions: options.workflow.presentationPrompt }),
    });
    if (reserved.kind !== "applied" && reserved.kind !== "adopted") {
      throw new Error(`Run ${runId} could not be queued: ${JSON.stringify(reserved)}`);
    }
    return runId;
  }

  /** Claim a queued (or parked) run and build the port its command executes against. */
  /** Claim a run; `how` makes it an explicit resume, which may accept a changed workflow. */
  activate(runId: string, how: { resume?: true; acceptChanges?: true } = {}): EmbeddedActivation {
    const claimed = this.store.claimRun({ runId, claimToken: randomUUID(), leaseMs: this.leaseMs, ...how });
    if (claimed.kind !== "applied" && claimed.kind !== "adopted") {
      throw new Error(`Run ${runId} could not be claimed: ${JSON.stringify(claimed)}`);
    }
    const { command } = claimed.value;
    const fence = { runId, generation: command.generation, claimToken: command.claimToken };
    return { command, port: new StoreRunPort(this.store, fence) };
  }

  /** Accept and execute one activation to its next stop. */
  async execute(
    activation: EmbeddedActivation,
    workflow: CompiledWorkflow,
    signal?: AbortSignal,
  ): Promise<ExecutionOutcome> {
    const { command, port } = activation;
    const accepted = await acceptRunCommand({
      command,
      port,
      load: async () => ({ ok: true, value: workflow }),
    });
    if (accepted.kind === "refused") return { kind: "rejected", error: accepted.error };
    if (accepted.kind === "parked") return { kind: "parked", reason: accepted.reason.code };
    const env = this.store.readRunEnv(command.runId);
    return executeRun({
      workflow: accepted.workflow,
      port,
      ...(signal ? { signal } : {}),
      ...(env === null ? {} : { env }),
    });
  }

  /** Reserve, activate and execute a run in one call. */
  async run(options: EmbeddedStartOptions): Promise<{ runId: string; outcome: ExecutionOutcome }> {
    const runId = this.reserve(options);
    const outcome = await this.execute(this.activate(runId), options.workflow);
    return { runId, outcome };
  }
}
