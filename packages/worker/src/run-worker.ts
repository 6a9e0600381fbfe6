import { acceptRunCommand, agentSessionFor, executeRun, toSafeError } from "@piw/engine";
import { createPiAgentSessions, loadPiSdk } from "@piw/pi-agent";
import { AgentLiveRelay } from "./agent-live-relay.js";
import { AgentProgressRelay } from "./agent-progress-relay.js";
import type { WorkerExit } from "@piw/protocol";
import { type CrashHook, crashingPort } from "./crash-hook.js";
import { type HostPeer, HostRunPort } from "./host-run-port.js";
import { enterRunEnv } from "./run-env.js";
import { loadRunWorkflow } from "./load-run-workflow.js";

/**
 * How the worker process ends. The host reads the typed exit report, not the code; the code only
 * tells whoever watches the process which kind of end it was.
 */
export const WORKER_EXIT_CODES = {
  /** Reported: the run went as far as it could (ended, waits, parked or was superseded). */
  reported: 0,
  /** Reported with an error: the command was refused, the workflow would not load, or the worker failed. */
  failed: 1,
  /** The host channel closed: no report, the execution was aborted. */
  channelLost: 2,
} as const;

/** How long the worker waits for the host to acknowledge its exit report before leaving anyway. */
const EXIT_REPORT_TIMEOUT_MS = 5_000;

type ReportedExit = Extract<WorkerExit, { kind: "reported" }>;
type Phase = ReportedExit["phase"];

export interface WorkerRunOptions {
  peer: HostPeer;
  launchId: string;
  pid: number;
  /** Aborted by the host's `cancel` push (and by the channel's loss, which also ends the process). */
  signal: AbortSignal;
  crash: CrashHook;
  /** One line for the host's log of this worker; never input, prompts or stacks. */
  log(line: string): void;
  /**
   * The raw text of what workflow code threw, which may quote input or secrets: for this worker's
   * local debug log (its stderr) only, never saved or sent.
   */
  debug(line: string): void;
}

/**
 * One worker's one run command, from `worker.hello` to its typed exit report. The command is accepted
 * (validated against the saved run, then marked running) before any workflow code is loaded, so an
 * invalid command never runs author code. Every path reports exactly once.
 */
export class WorkerRun {
  private phase: Phase = "bootstrap";
  private reported: Promise<number> | null = null;

  constructor(private readonly options: WorkerRunOptions) {}

  /** Resolves with the process exit code once the exit is reported. */
  async run(): Promise<number> {
    try {
      return await this.steps();
    } catch (error) {
      return this.fail(error);
    }
  }

  /** An unexpected failure (a thrown bug, an uncaught exception in workflow code) in the current phase. */
  fail(error: unknown): Promise<number> {
    const failure = toSafeError(error, { code: "worker_failed", subject: "The worker" });
    this.options.debug(failure.debug);
    return this.report({ kind: "reported", phase: this.phase, error: failure.error });
  }

  private async steps(): Promise<number> {
    const { peer, crash, signal } = this.options;
    const assignment = await peer.call("worker.hello", {
      launchId: this.options.launchId,
      pid: this.options.pid,
    });
    const { command } = assignment;
    // Before the workflow file is loaded: its top level and every node see the run's environment.
    const env = enterRunEnv(assignment.env);
    await crash.reach("starting");
    const port = crashingPort(new HostRunPort(peer, assignment), crash);

    // The run is running once this accepts; a workflow that cannot be used ends it failed, through the fence.
    const accepted = await acceptRunCommand({
      command,
      port,
      load: (how) => loadRunWorkflow(assignment.run.source, how),
    });
    if (accepted.kind === "parked") {
      this.options.log(`run ${command.runId}: resume refused the changed workflow (parked)`);
      return this.report({ kind: "reported", phase: "bootstrap" });
    }
    if (accepted.kind === "refused") {
      if (accepted.debug !== undefined) this.options.debug(`loading the workflow: ${accepted.debug}`);
      this.options.log(`run ${command.runId}: ${command.type} refused (${accepted.error.code})`);
      return this.report({ kind: "reported", phase: "bootstrap", error: accepted.error });
    }

    this.phase = "execute";
    // Pi's SDK takes a while to load: start it now, beside the run's first nodes, if a step needs it.
    const origin = assignment.run.origin;
    const isolated = [...accepted.workflow.nodes.values()].some(
      (node) => node.kind === "agent" && agentSessionFor(node, origin) === "isolated",
    );
    // The SDK's entry as a connected Pi reported it (piw installed into Pi has none beside it).
    const sdk = { reportedEntry: assignment.piSdkEntry };
    if (isolated) loadPiSdk(process.env, sdk).catch(() => undefined);
    // An isolated step's tool calls and output, live to the host (which shows them in the run's view).
    const progress = new AgentProgressRelay((fact) => {
      peer.call("agent.progress", fact).catch(() => {
        // Progress is live only: a lost channel ends this worker anyway.
      });
    });
    // What an isolated step's model streams and calls, live to the host for the viewer's conversation.
    const live = new AgentLiveRelay((transcript) => {
      peer.call("agent.live", transcript).catch(() => {
        // Live only, like progress.
      });
    });
    const outcome = await executeRun({
      workflow: accepted.workflow,
      port,
      signal,
      env,
      debug: this.options.debug,
      // Isolated agent steps run in Pi SDK sessions this process owns (Pi loads on the first one).
      agents: {
        origin: assignment.run.origin,
        workingDir: assignment.run.workingDir,
        isolated: createPiAgentSessions({
          sdk,
          onProgress: (step, event) => {
            if (event.kind === "tool")
              this.options.log(`run ${command.runId}: ${step.path}: tool ${event.text}`);
            progress.report(step, event);
          },
          onLive: (step, transcript) => live.report(step, transcript),
        }),
      },
      // The host keeps these so it can kill a command this process leaves behind if it dies.
      onProcessGroup: (pgid, alive) => {
        peer.call("worker.processGroup", { pgid, alive }).catch(() => {
          // A lost channel ends this worker, which then kills its commands itself.
        });
      },
    });
    this.options.log(`run ${command.runId}: ${outcome.kind}`);
    // Failed and timed-out runs were ended through finishRun: a normal exit, not a worker failure.
    return this.report({ kind: "reported", phase: "execute" });
  }

  private report(exit: ReportedExit): Promise<number> {
    this.reported ??= this.sendReport(exit);
    return this.reported;
  }

  private async sendReport(exit: ReportedExit): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, EXIT_REPORT_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.options.peer.call("worker.exit", exit), timeout]);
    } catch {
      // The host could not take the report; it treats this worker as lost, which is still safe.
    } finally {
      clearTimeout(timer);
    }
    return exit.error ? WORKER_EXIT_CODES.failed : WORKER_EXIT_CODES.reported;
  }
}
