import { randomBytes, randomUUID } from "node:crypto";
import { PIW_ENV } from "@piw/state-dir";
import { statSync } from "node:fs";
import { isEndedRun, RpcError, RpcPeer, type Transition, workerMethods } from "@piw/protocol";
import type { Claim, RunStore } from "@piw/store";
import type { AgentProgressBoard } from "./agent-progress-board.js";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import { killProcessGroups } from "./process-groups.js";
import { WarmWorker } from "./warm-worker.js";
import { LiveWorker, type WorkerPeer } from "./live-worker.js";
import type { PiSdkLocation } from "./pi-sdk-location.js";
import { workerHandlers } from "./worker-channel.js";
import { GroupCommitter } from "./group-committer.js";
import { type ActivationKind, type SlotWait, WorkerSlots } from "./worker-slots.js";

export interface SupervisorOptions {
  store: RunStore;
  stateDir: string;
  /** argv of the worker process; the host adds nothing to it. */
  workerCommand: string[];
  /** Extra environment for workers (on top of the host's own). */
  workerEnv?: Record<string, string>;
  leaseMs: number;
  /** The most workers that run at once (`PIW_MAX_WORKERS`); runs beyond it wait in line for a slot. */
  maxWorkers: number;
  /** How long a cancelled run's worker may take to exit before its process group is killed. */
  cancelGraceMs: number;
  log: HostLog;
  /** Where workers report their isolated agent steps' progress; a gone worker's open visits leave it. */
  progress: AgentProgressBoard;
  /** Pi's SDK as a connected Pi reported it, handed to each worker for isolated agent steps. */
  piSdk: Pick<PiSdkLocation, "entry">;
  /** Publish the run's view to subscribers. */
  publish(runId: string): void;
  /** Group commit of the workers' durable writes (default on; off only for benches and tests). */
  groupCommit?: boolean;
  /** See WarmWorkerOptions.wakeLingerMs. */
  wakeLingerMs?: number;
  /** Diagnostics and tests: after each group commit, how many requests it held. */
  onGroupCommit?(requests: number): void;
}

export interface WorkerInfo {
  runId: string;
  launchId: string;
  pid: number | null;
}

/**
 * What an activation did: the store's claim, or the run lined up for a worker slot because the host
 * already runs its cap of workers (the store would have claimed it; it stays queued or parked meanwhile).
 */
export type Activation = Transition<Claim> | { kind: "waiting"; wait: SlotWait };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Every worker's environment: the host's own, the extra worker env, and PIW_HOME. Workers are started
 * before their launch exists, so the launch ID comes in the `assign` push, never from here.
 */
function workerEnv(options: SupervisorOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const merged: Record<string, string> = {
    ...env,
    ...options.workerEnv,
    [PIW_ENV.home.name]: options.stateDir,
  };
  // A launch ID in the environment would make the worker skip waiting for its assignment.
  delete merged[PIW_ENV.launchId.name];
  return merged;
}

/**
 * Claims runs, launches one worker per claim and supervises it: every worker call is applied with the
 * launch's fence, and an exit is judged by the store's progress rule (relaunch only after progress).
 * Launches are served by a pre-started idle worker (see WarmWorker), which is no run's worker until
 * it is assigned.
 */
export class Supervisor {
  private readonly workers = new Map<string, LiveWorker>();
  private readonly warm: WarmWorker;
  private readonly committer: GroupCommitter;
  private readonly slots: WorkerSlots;
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.slots = new WorkerSlots(Math.max(1, Math.floor(options.maxWorkers)));
    this.warm = new WarmWorker({
      command: options.workerCommand,
      env: workerEnv(options),
      cwd: options.stateDir,
      log: options.log,
      ...(options.wakeLingerMs === undefined ? {} : { wakeLingerMs: options.wakeLingerMs }),
    });
    this.warm.fill();
    this.committer = new GroupCommitter({
      store: options.store,
      enabled: options.groupCommit ?? true,
      runChanged: (runId) => this.runChanged(runId),
      ...(options.onGroupCommit ? { committed: options.onGroupCommit } : {}),
    });
  }

  /** A launch is coming: the idle worker loads its modules now rather than on its assignment. */
  wakeIdleWorker(): void {
    this.warm.wake();
  }

  /** The pre-started worker waiting for the next activation, if any; it belongs to no run. */
  idleWorkerPid(): number | null {
    return this.warm.idlePid();
  }

  acceptedWorker(runId: string, generation: number): { launchId: string } | undefined {
    for (const worker of this.workers.values()) {
      if (worker.runId === runId && worker.generation === generation && worker.accepted) {
        return { launchId: worker.launchId };
      }
    }
    return undefined;
  }

  /** Where the run stands in the line for a worker slot, if it waits in it. */
  slotWait(runId: string): SlotWait | undefined {
    return this.slots.wait(runId);
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
   * clock's, which the store allows only for a run whose wait or retry pause is due. With the cap of
   * workers running, a run the store would claim waits in line instead (worker-cap rule).
   */
  activate(runId: string, why: string, how: ActivationKind = {}): Activation {
    if (this.stopping) throw new RpcError("refused", "The host is stopping; start it again to run work.");
    if (this.workers.size < this.slots.cap && this.slots.size === 0) return this.claim(runId, why, how);
    const { store, log } = this.options;
    // Refused now, refused at once: only a run the store would claim waits for a slot.
    const refused = store.checkClaim({ runId, ...how });
    if (refused !== null) {
      log(`run ${runId}: not activated (${why}): conflict`);
      return { kind: "conflict", evidence: refused };
    }
    this.slots.enqueue(runId, { why, how });
    const wait = this.slots.wait(runId) ?? { position: this.slots.size, cap: this.slots.cap };
    log(`run ${runId}: waiting for a worker (${wait.position} in line, ${wait.cap} at most): ${why}`);
    this.options.publish(runId);
    return { kind: "waiting", wait };
  }

  /** Start runs waiting in line while slots are free; a run the store no longer lets start is skipped. */
  private fillSlots(): void {
    while (!this.stopping && this.workers.size < this.slots.cap) {
      const next = this.slots.next();
      if (next === undefined) return;
      const [runId, { why, how }] = next;
      try {
        this.claim(runId, `${why}, after waiting for a worker`, how);
      } catch (error) {
        this.options.log(`run ${runId}: activation failed: ${describeBug(error)}`);
      }
    }
  }

  private claim(runId: string, why: string, how: ActivationKind): Transition<Claim> {
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

  /** The worker of the run's current generation, if any. */
  currentWorker(runId: string): LiveWorker | undefined {
    const run = this.options.store.getRun(runId);
    if (!run) return undefined;
    for (const worker of this.workers.values()) {
      if (worker.runId === runId && worker.generation === run.generation) return worker;
    }
    return undefined;
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
      if (run && isEndedRun(run)) {
        this.slots.drop(runId);
        if (run.presentationState === "pending") this.present(runId);
      }
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
    // The idle worker (already started; loading its modules since a wake or this assignment) becomes this launch's;
    // from here it is supervised exactly like a worker spawned for it.
    const spare = this.warm.take();
    const proc = spare.process;
    const deps = {
      store,
      log,
      progress: this.options.progress,
      piSdk: this.options.piSdk,
      runChanged: (id: string) => this.runChanged(id),
      committer: this.committer,
    };
    const worker = new LiveWorker(
      launchId,
      command,
      proc,
      (self): WorkerPeer =>
        new RpcPeer({
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
    this.options.progress.dropLaunch(worker.runId, worker.launchId);
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
    } else this.runChanged(worker.runId);
    // Its slot is free: the next run in line starts.
    this.fillSlots();
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
