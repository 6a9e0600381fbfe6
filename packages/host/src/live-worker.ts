import type {
  Fence,
  RpcPeer,
  RunCommand,
  WorkerExitDecision,
  workerMethods,
  workerPushes,
} from "@piw/protocol";
import { AgentChannel } from "./agent-channel.js";
import { LiveSpend } from "./live-spend.js";
import type { WorkerProcess } from "./worker-process.js";

/** The host's end of a worker's channel: it serves `workerMethods`, calls nothing, pushes `workerPushes`. */
export type WorkerPeer = RpcPeer<typeof workerMethods, Record<never, never>, typeof workerPushes>;

/**
 * Where one launched worker is, each phase holding what it owns. A worker is `launching` until it
 * says hello for its launch (then it has accepted its command), may be told to stop (`cancelling`,
 * with the timer that kills it if it lingers), reports how it ended (`exiting`, with the decision the
 * store took on its report), and is `gone` once its process has exited.
 */
export type WorkerPhase =
  | { kind: "launching" }
  | { kind: "running" }
  | { kind: "cancelling"; killTimer: NodeJS.Timeout }
  | { kind: "exiting"; decision: WorkerExitDecision; killTimer: NodeJS.Timeout | null }
  | { kind: "gone" };

export type WorkerEvent =
  | { type: "hello" }
  | { type: "cancel"; killTimer: NodeJS.Timeout }
  | { type: "reported"; decision: WorkerExitDecision }
  | { type: "gone" };

function killTimerOf(phase: WorkerPhase): NodeJS.Timeout | null {
  return phase.kind === "cancelling" || phase.kind === "exiting" ? phase.killTimer : null;
}

/** The one place a worker's phase changes. An event that does not apply leaves the phase as it is. */
export function nextWorkerPhase(phase: WorkerPhase, event: WorkerEvent): WorkerPhase {
  if (phase.kind === "gone") return phase;
  switch (event.type) {
    case "hello":
      return phase.kind === "launching" ? { kind: "running" } : phase;
    case "cancel":
      return phase.kind === "exiting"
        ? { ...phase, killTimer: phase.killTimer ?? event.killTimer }
        : { kind: "cancelling", killTimer: killTimerOf(phase) ?? event.killTimer };
    case "reported":
      return phase.kind === "exiting"
        ? phase
        : { kind: "exiting", decision: event.decision, killTimer: killTimerOf(phase) };
    case "gone":
      return { kind: "gone" };
    default:
      return event satisfies never;
  }
}

/** One launched worker as the host tracks it while its process lives. */
export class LiveWorker {
  readonly fence: Fence;
  /** The open agent step's traffic with the run's Pi session; closed when the run stops needing it. */
  readonly agent: AgentChannel;
  /** Process groups of the worker's shell commands that are still running, as the worker reported them. */
  readonly processGroups = new Set<number>();
  /** Its isolated sessions' usage not saved yet: the run's budget counts it (one worker per run at a time). */
  readonly liveSpend = new LiveSpend();
  readonly peer: WorkerPeer;
  private current: WorkerPhase = { kind: "launching" };

  constructor(
    readonly launchId: string,
    readonly command: RunCommand,
    readonly process: WorkerProcess,
    /** The worker's channel; its handlers act for this worker. */
    channel: (worker: LiveWorker) => WorkerPeer,
  ) {
    this.fence = { runId: command.runId, generation: command.generation, claimToken: command.claimToken };
    this.agent = new AgentChannel(command.runId);
    this.peer = channel(this);
  }

  get runId(): string {
    return this.command.runId;
  }

  get generation(): number {
    return this.command.generation;
  }

  get phase(): WorkerPhase {
    return this.current;
  }

  /** The worker said hello for this launch: it accepted its command. */
  get accepted(): boolean {
    return this.current.kind !== "launching" && this.current.kind !== "gone";
  }

  /** The decision taken on the worker's own exit report, if it sent one. */
  get reported(): WorkerExitDecision | null {
    return this.current.kind === "exiting" ? this.current.decision : null;
  }

  /** Tell the worker to stop; kill it after `graceMs` if it is still there (one timer however often). */
  cancel(graceMs: number, onLinger: () => void): void {
    this.peer.push("cancel", { reason: "The run was cancelled." });
    if (killTimerOf(this.current) !== null) return;
    const killTimer = setTimeout(onLinger, graceMs);
    killTimer.unref();
    this.advance({ type: "cancel", killTimer });
  }

  advance(event: WorkerEvent): void {
    const before = this.current;
    this.current = nextWorkerPhase(before, event);
    // A worker that is gone needs no timer to kill it.
    const timer = killTimerOf(before);
    if (this.current.kind === "gone" && timer !== null) clearTimeout(timer);
  }
}
