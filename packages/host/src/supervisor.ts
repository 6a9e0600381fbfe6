import { randomBytes, randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import {
  type AgentProgress,
  isTerminalStatus,
  RpcError,
  RpcPeer,
  type SubmissionResult,
  type Transition,
  type TurnRecord,
  workerMethods,
} from "@piw/protocol";
import type { Claim, RunStore } from "@piw/store";
import { agentTurnEnding } from "./agent-channel.js";
import { turnStopReason } from "./turn-abort.js";
import { saveTurnProgress } from "./turn-progress.js";
import { AgentProgressBoard } from "./agent-progress-board.js";
import type { LiveWorkerIndex } from "./build-run-view.js";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import { killProcessGroups } from "./process-groups.js";
import { WarmWorker } from "./warm-worker.js";
import { LiveWorker } from "./live-worker.js";
import { PiSdkLocation } from "./pi-sdk-location.js";
import { workerHandlers } from "./worker-channel.js";
import { GroupCommitter } from "./group-committer.js";

export interface SupervisorOptions {
  store: RunStore;
  stateDir: string;
  /** argv of the worker process; the host adds nothing to it. */
  workerCommand: string[];
  /** Extra environment for workers (on top of the host's own). */
  workerEnv?: Record<string, string>;
  leaseMs: number;
  /** How long a cancelled run's worker may take to exit before its process group is killed. */
  cancelGraceMs: number;
  log: HostLog;
  /** Publish the run's view to subscribers. */
  publish(runId: string): void;
  /** Group commit of the workers' durable writes (default on; off only for benches and tests). */
  groupCommit?: boolean;
  /** Diagnostics and tests: after each group commit, how many requests it held. */
  onGroupCommit?(requests: number): void;
}

export interface WorkerInfo {
  runId: string;
  launchId: string;
  pid: number | null;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Every worker's environment: the host's own, the extra worker env, and PIW_HOME. Workers are started
 * before their launch exists, so the launch ID comes in the `assign` push, never from here.
 */
function workerEnv(options: SupervisorOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const merged: Record<string, string> = { ...env, ...options.workerEnv, PIW_HOME: options.stateDir };
  // A launch ID in the environment would make the worker skip waiting for its assignment.
  delete merged.PIW_LAUNCH_ID;
  return merged;
}

/**
 * Claims runs, launches one worker per claim and supervises it: every worker call is applied with the
 * launch's fence, and an exit is judged by the store's progress rule (relaunch only after progress).
 * Launches are served by a pre-started idle worker (see WarmWorker), which is no run's worker until
 * it is assigned.
 */
export class Supervisor implements LiveWorkerIndex {
  private readonly workers = new Map<string, LiveWorker>();
  /** Isolated agent steps' latest progress, per run, as workers report it. */
  readonly progress = new AgentProgressBoard();
  /** Where Pi's SDK is, as connected Pi processes reported it (for isolated agent steps). */
  readonly piSdk: PiSdkLocation;
  private readonly warm: WarmWorker;
  private readonly committer: GroupCommitter;
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.piSdk = new PiSdkLocation(options.log);
    this.warm = new WarmWorker({
      command: options.workerCommand,
      env: workerEnv(options),
      cwd: options.stateDir,
      log: options.log,
    });
    this.warm.fill();
    this.committer = new GroupCommitter({
      store: options.store,
      enabled: options.groupCommit ?? true,
      runChanged: (runId) => this.runChanged(runId),
      ...(options.onGroupCommit ? { committed: options.onGroupCommit } : {}),
    });
  }

  /** The pre-started worker waiting for the next activation, if any; it belongs to no run. */
  idleWorkerPid(): number | null {
    return this.warm.idlePid();
  }

  agentProgress(runId: string): AgentProgress | undefined {
    return this.progress.get(runId);
  }

  agentActivity(runId: string): AgentProgress[] {
    return this.progress.activity(runId);
  }

  acceptedWorker(runId: string, generation: number): { launchId: string } | undefined {
    for (const worker of this.workers.values()) {
      if (worker.runId === runId && worker.generation === generation && worker.accepted) {
        return { launchId: worker.launchId };
      }
    }
    return undefined;
  }

  hasLiveWorker(runId: string): boolean {
    for (const worker of this.workers.values()) if (worker.runId === runId) return true;
    return false;
  }

  liveWorkers(): WorkerInfo[] {
    return [...this.workers.values()].map((w) => ({
      runId: w.runId,
      launchId: w.launchId,
      pid: w.process.pid,
    }));
  }

  /**
   * Claim a queued or parked run with a fresh token and lease, and launch its worker. `resume` makes
   * it an explicit resume, which the store allows only for a run a person may resume; `wake` is the
   * clock's, which the store allows only for a run whose wait or retry pause is due.
   */
  activate(
    runId: string,
    why: string,
    how: { resume?: true; acceptChanges?: true; wake?: true } = {},
  ): Transition<Claim> {
    if (this.stopping) throw new RpcError("refused", "The host is stopping; start it again to run work.");
    const { store, leaseMs, log } = this.options;
    const claimed = store.claimRun({ runId, claimToken: randomUUID(), leaseMs, ...how });
    if (claimed.kind === "applied") this.launch(runId, claimed.value, why);
    else log(`run ${runId}: not activated (${why}): ${claimed.kind}`);
    this.runChanged(runId);
    return claimed;
  }

  /** The store cancelled a run: tell its worker to stop, and kill it if it lingers. */
  cancelWorkers(runId: string): void {
    for (const worker of this.workers.values()) {
      if (worker.runId !== runId) continue;
      worker.cancel(this.options.cancelGraceMs, () => {
        this.options.log(`worker ${worker.launchId}: still alive after cancel; killing its process group`);
        worker.process.kill();
      });
    }
  }

  /** The accepted worker running `runId` now, if any. */
  private currentWorker(runId: string): LiveWorker | undefined {
    const run = this.options.store.getRun(runId);
    if (!run) return undefined;
    for (const worker of this.workers.values()) {
      if (worker.runId === runId && worker.generation === run.generation) return worker;
    }
    return undefined;
  }

  /**
   * The model's output for the step that owns the session's open turn (seed 000): only that turn may
   * submit, and only for the visit it was started for. Resolves with the worker's verdict.
   */
  async submit(sessionId: string, output: unknown): Promise<SubmissionResult> {
    const { store } = this.options;
    const turn = store.openSessionTurn(sessionId);
    if (!turn || turn.runId === null || turn.path === null || turn.visit === null) {
      // A submit after the host stopped the step's turn (a deadline, a cancel) says why.
      const last = store.latestWorkflowTurn(sessionId);
      const stopped =
        last?.runId != null
          ? turnStopReason(store.getRun(last.runId), last, store.listRunSteps(last.runId))
          : null;
      const why =
        stopped === null || stopped.includes("already succeeded")
          ? "submit only while answering a workflow step prompt."
          : `${stopped} It takes no more submissions.`;
      throw new RpcError("refused", `No workflow step owns this turn: ${why}`);
    }
    const run = store.getRun(turn.runId);
    const steps = store.listRunSteps(turn.runId);
    const stopped = turnStopReason(run, turn, steps);
    const openStep = steps.find((saved) => saved.path === turn.path && saved.visit === turn.visit);
    if (stopped !== null && (openStep?.status === "timed_out" || run?.status === "cancelled")) {
      throw new RpcError("refused", `${stopped} It takes no more submissions.`);
    }
    if (run?.status !== "running") {
      throw new RpcError(
        "refused",
        `Run ${turn.runId} is ${run?.status ?? "gone"}; its step ${turn.path} takes no submissions.`,
      );
    }
    const step = openStep;
    if (step?.status !== "running") {
      // A second submit after the accepted one, in the same turn: nothing is waiting for it.
      throw new RpcError(
        "refused",
        `Workflow step ${turn.path} is already ${step?.status ?? "closed"}; end your turn, the workflow goes on by itself.`,
      );
    }
    const worker = this.currentWorker(turn.runId);
    if (!worker) {
      throw new RpcError(
        "refused",
        `Run ${turn.runId} has no running worker for step ${turn.path} right now; submit again shortly.`,
      );
    }
    return worker.agent.submit({ path: turn.path, visit: turn.visit }, output);
  }

  /** The model's progress on the step the session's open turn runs (the workflow tool's `update`). */
  update(sessionId: string, update: Record<string, unknown>): { runId: string; path: string; visit: number } {
    const fenceOf = (runId: string) => this.currentWorker(runId)?.fence;
    const saved = saveTurnProgress({ store: this.options.store, fenceOf }, sessionId, update);
    this.runChanged(saved.runId);
    return saved;
  }

  /** A workflow turn ended without being answered by a submission (or was lost): tell its step. */
  turnEnded(turn: TurnRecord): void {
    if (turn.runId === null || turn.path === null || turn.visit === null) return;
    this.currentWorker(turn.runId)?.agent.turnEnded(
      { path: turn.path, visit: turn.visit },
      agentTurnEnding(turn),
    );
  }

  /** Kill the run's workers (their exits are then judged as lost). */
  killWorkers(runId: string, why: string): void {
    for (const worker of this.workers.values()) {
      if (worker.runId !== runId) continue;
      this.options.log(`worker ${worker.launchId}: killing its process group: ${why}`);
      worker.process.kill();
    }
  }

  /**
   * After any change to a run: create terminal messages once the control state is terminal, end
   * waits the run no longer needs, and publish the view.
   */
  runChanged(runId: string): void {
    const { store, log } = this.options;
    try {
      const run = store.getRun(runId);
      if (run && isTerminalStatus(run.status) && run.presentationState === "pending") this.present(runId);
      for (const worker of this.workers.values()) {
        if (worker.runId !== runId) continue;
        const holds =
          run !== null &&
          run.generation === worker.generation &&
          (run.status === "starting" || run.status === "running");
        if (!holds) failWaits(worker);
        else if (run.paused) worker.agent.pause();
      }
    } catch (error) {
      log(`run ${runId}: could not reconcile after a change: ${describeBug(error)}`);
    }
    this.options.publish(runId);
  }

  /** Terminal messages follow the control state; a failure here is recorded by the store, never undone. */
  present(runId: string): void {
    try {
      const presented = this.options.store.createTerminalMessages({ runId });
      if (presented.kind === "conflict") {
        this.options.log(`run ${runId}: terminal messages not created (${presented.evidence.kind})`);
      }
    } catch (error) {
      this.options.log(`run ${runId}: terminal messages failed: ${describeBug(error)}`);
    }
  }

  /** Close every worker's channel (they exit), wait up to `graceMs`, then kill what is left. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const idle = this.warm.close(graceMs);
    const all = [...this.workers.values()];
    for (const worker of all) {
      failWaits(worker);
      worker.peer.close("The host is stopping.");
      worker.process.closeChannel();
    }
    const gone = Promise.all(all.map((w) => w.process.gone));
    await Promise.race([gone, delay(graceMs)]);
    for (const worker of all) worker.process.kill();
    await Promise.all([Promise.race([gone, delay(1000)]), idle]);
  }

  private launch(runId: string, claim: Claim, why: string): void {
    const { store, log } = this.options;
    const { command } = claim;
    const launchId = `${runId}.g${command.generation}.${randomBytes(3).toString("hex")}`;
    // The idle worker (already started and loaded) becomes this launch's; from here it is supervised
    // exactly like a worker spawned for it.
    const spare = this.warm.take();
    const proc = spare.process;
    const deps = {
      store,
      log,
      progress: this.progress,
      piSdk: this.piSdk,
      runChanged: (id: string) => this.runChanged(id),
      committer: this.committer,
    };
    const worker = new LiveWorker(
      launchId,
      command,
      proc,
      (self) =>
        new RpcPeer<typeof workerMethods>({
          send: (line) => proc.send(line),
          local: { methods: workerMethods, handlers: workerHandlers(deps, self) },
          onRefused: (error) => log(`worker ${launchId}: refused a frame (${error.code})`),
        }),
    );
    spare.bind({
      label: launchId,
      onStdout: (chunk) => worker.peer.feed(chunk),
      onGone: (how) => this.onGone(worker, how),
    });
    this.workers.set(launchId, worker);
    // Saved before the worker can call anything: the launch revision is what the progress rule compares.
    const recorded = store.recordWorkerLaunch(worker.fence, {
      launchId,
      commandType: command.type,
      pid: proc.pid,
    });
    if (recorded.kind !== "applied" && recorded.kind !== "adopted") {
      log(`run ${runId}: launch ${launchId} not recorded (${recorded.kind}); stopping its worker`);
      proc.kill();
      return;
    }
    // Only after the launch is saved: the worker calls nothing before it has its launch ID.
    worker.peer.push("assign", {
      launchId,
      workingDir: workingDirOf(store.getRun(runId)?.workingDir ?? null, this.options.stateDir),
    });
    log(`run ${runId}: launched worker ${launchId} (pid ${proc.pid ?? "none"}) for ${command.type}, ${why}`);
  }

  private onGone(worker: LiveWorker, how: string): void {
    const { store, log } = this.options;
    this.workers.delete(worker.launchId);
    this.progress.dropLaunch(worker.runId, worker.launchId);
    // Read before the worker is gone: the decision on its own exit report, if it sent one.
    let decision = worker.reported;
    worker.advance({ type: "gone" });
    // A worker that died in the middle of a shell node left its command running: stop it before
    // anything (a relaunch, a resume) can run that node again beside it.
    const killed = killProcessGroups(worker.processGroups);
    worker.processGroups.clear();
    if (killed.length > 0) {
      log(
        `worker ${worker.launchId}: killed the command process group(s) it left running: ${killed.join(", ")}`,
      );
    }
    worker.peer.close("The worker exited.");
    failWaits(worker);
    // A stopping host leaves the launch open: the next host judges it at start-up.
    if (this.stopping) return;
    if (decision === null) {
      try {
        const recorded = store.recordWorkerExit({
          launchId: worker.launchId,
          exit: { kind: "lost", detail: how },
        });
        decision =
          recorded.kind === "applied" || recorded.kind === "adopted" ? recorded.value.decision : "none";
      } catch (error) {
        log(`worker ${worker.launchId}: exit not recorded: ${describeBug(error)}`);
        return;
      }
    }
    log(`worker ${worker.launchId}: gone (${how}); decision ${decision}`);
    if (decision === "relaunch") {
      try {
        this.activate(worker.runId, "relaunch after progress");
      } catch (error) {
        log(`run ${worker.runId}: relaunch failed: ${describeBug(error)}`);
      }
      return;
    }
    this.runChanged(worker.runId);
  }
}

function failWaits(worker: LiveWorker): void {
  worker.agent.close("The run no longer needs this wait; stop the agent step.");
}

/** Where a run's worker runs: the run's own directory while it still exists, else the state dir. */
function workingDirOf(workingDir: string | null, fallback: string): string {
  if (workingDir === null) return fallback;
  try {
    return statSync(workingDir).isDirectory() ? workingDir : fallback;
  } catch {
    return fallback;
  }
}
