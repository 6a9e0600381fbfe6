import { chmodSync, unlinkSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createServer, type Server, type Socket } from "node:net";
import { prepareStateDir } from "@piw/state-dir";
import { type OpenStoreOptions, type RunReader, RunStore } from "@piw/store";
import { AgentProgressBoard } from "./agent-progress-board.js";
import type { LiveWorkerIndex } from "./build-run-view.js";
import type { HostInfo } from "./client-handlers.js";
import { serveClient } from "./client-session.js";
import { type HostCrashHook, noHostCrash } from "./crash-hook.js";
import { describeBug } from "./host-errors.js";
import { acquireHostLock, type HostLock } from "./host-lock.js";
import { type HostLog, silentLog } from "./host-log.js";
import { PiSdkLocation } from "./pi-sdk-location.js";
import { reconcileAtStart, sweepExpiredStarting } from "./reconcile.js";
import { RunControl } from "./run-control.js";
import { ScheduleFirer } from "./schedule-firer.js";
import { preflightRunner } from "./schedule-preflight.js";
import { Supervisor } from "./supervisor.js";
import { ViewPublisher } from "./view-publisher.js";
import { WakeClock } from "./wake-clock.js";
import { WallBudgets } from "./wall-budgets.js";
import { WorkflowTurns } from "./workflow-turns.js";

export interface StartHostOptions {
  /** Holds `state.db`, `host.sock` and `host.lock`; created 0700. */
  stateDir: string;
  /** argv that starts one worker process. */
  workerCommand: string[];
  workerEnv?: Record<string, string>;
  /** The most workers running at once (default twice the cores, at least 4); more runs wait in line. */
  maxWorkers?: number;
  /** Lease of a claim until its worker marks the run running (default 30 s). */
  leaseMs?: number;
  /** A cancelled run's worker is killed after this long (default 3 s). */
  cancelGraceMs?: number;
  /** On stop, workers get this long to exit after their channel closes (default 5 s). */
  stopGraceMs?: number;
  /** How often expired `starting` leases are looked for (default 5 s). */
  sweepIntervalMs?: number;
  messageLeaseMs?: number;
  now?: () => number;
  version?: string;
  log?: HostLog;
  /** Diagnostics and tests: called after each group commit with the number of requests it held. */
  onGroupCommit?(requests: number): void;
  /** Runs reconciliation reads per page (the store's default); tests use a small page. */
  reconcilePageSize?: number;
  /** argv of the preflight child that prepares a schedule's run; without it a firing fails as `preflight_failed`. */
  preflightCommand?: string[];
  /** The preflight child's time limit (default 10 s). */
  preflightTimeoutMs?: number;
}

/**
 * Knobs for benchmarks and fault tests, kept out of the public entry: `@piw/host/testing` gives them to
 * the host app (which reads them from `PIW_*` variables), the benches and tests.
 */
export interface HostKnobs {
  /** Opens the store; `@piw/host/testing` passes one with SQLite's synchronous mode (`PIW_SYNCHRONOUS`). */
  openStore?: (options: OpenStoreOptions) => RunStore;
  /**
   * Group commit of concurrent runs' durable writes (default true). `false` commits each request alone,
   * as before group commit; only the commit bench and tests turn it off (`PIW_GROUP_COMMIT=off`).
   */
  groupCommit?: boolean;
  /** Where to die on purpose (`hostCrashHookFromEnv`); none by default. */
  crashHook?: HostCrashHook;
  /** How long a woken idle worker waits for its launch before it is replaced (default 30 s; tests). */
  wakeLingerMs?: number;
}

export interface RunningHost {
  readonly pid: number;
  readonly stateDir: string;
  readonly socketPath: string;
  /** Read-only access to the state, for diagnostics and tests; every change goes through the host. */
  readonly reader: RunReader;
  /** Settles once the host has stopped (after `stop()` or a client's `host.stop`). */
  readonly stopped: Promise<void>;
  stop(): Promise<void>;
}

/** Twice the cores, at least 4: workers mostly wait on models and commands, yet each is a Node process. */
function defaultMaxWorkers(): number {
  return Math.max(4, availableParallelism() * 2);
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/**
 * Start the one host of a state directory: take its lock (or throw `HostAlreadyRunning`), open the
 * store, reconcile what the previous host left, and serve clients on `host.sock`.
 */
export function startHost(options: StartHostOptions): Promise<RunningHost> {
  return startHostWith(options, {});
}

/** `startHost` with the benchmark and fault-test knobs of `HostKnobs` (given by `@piw/host/testing`). */
export async function startHostWith(options: StartHostOptions, tuning: HostKnobs): Promise<RunningHost> {
  const log = options.log ?? silentLog;
  const now = options.now ?? Date.now;
  const paths = prepareStateDir(options.stateDir);
  const lock: HostLock = acquireHostLock(paths.lockPath);
  let store: RunStore;
  try {
    store = (tuning.openStore ?? RunStore.open)({ stateDir: paths.stateDir, now });
  } catch (error) {
    lock.release();
    throw error;
  }
  const info: HostInfo = {
    pid: process.pid,
    version: options.version ?? "0.0.0",
    stateDir: paths.stateDir,
    startedAt: now(),
    synchronous: store.settings().synchronous,
  };
  const holder: { publisher?: ViewPublisher; clock?: WakeClock } = {};
  // Live transcripts ask for a view push (at most ten a second a run); the viewer reads them again.
  const progress = new AgentProgressBoard((runId) => holder.publisher?.changed(runId));
  const piSdk = new PiSdkLocation(log);
  const supervisor = new Supervisor({
    store,
    stateDir: paths.stateDir,
    workerCommand: options.workerCommand,
    ...(options.workerEnv ? { workerEnv: options.workerEnv } : {}),
    leaseMs: options.leaseMs ?? 30_000,
    maxWorkers: options.maxWorkers ?? defaultMaxWorkers(),
    cancelGraceMs: options.cancelGraceMs ?? 3_000,
    log,
    progress,
    piSdk,
    ...(tuning.groupCommit === undefined ? {} : { groupCommit: tuning.groupCommit }),
    ...(tuning.wakeLingerMs === undefined ? {} : { wakeLingerMs: tuning.wakeLingerMs }),
    ...(options.onGroupCommit ? { onGroupCommit: options.onGroupCommit } : {}),
    publish: (runId) => {
      holder.publisher?.changed(runId);
      // A run that parked on a wait or retry, or was paused, resumed or cancelled, moves the clock.
      holder.clock?.arm(runId);
    },
  });
  const live: LiveWorkerIndex = {
    acceptedWorker: (runId, generation) => supervisor.acceptedWorker(runId, generation),
    slotWait: (runId) => supervisor.slotWait(runId),
    agentProgress: (runId) => progress.get(runId),
    agentActivity: (runId) => progress.activity(runId),
    agentFacts: (runId, path, visit) => progress.visitFacts(runId, path, visit),
    liveTranscript: (runId, path, visit) => progress.live.get(runId, path, visit),
    liveSeq: (runId) => progress.live.seq(runId),
  };
  const turns = new WorkflowTurns({
    store,
    currentWorker: (runId) => supervisor.currentWorker(runId),
    runChanged: (runId) => supervisor.runChanged(runId),
  });
  const publisher = new ViewPublisher(store, live, (error) => log(`views: ${describeBug(error)}`));
  holder.publisher = publisher;
  const control = new RunControl({
    store,
    supervisor,
    log,
    now,
    crash: tuning.crashHook ?? noHostCrash,
    wakeDue: () => clock.wakeDue(),
  });
  const schedules = new ScheduleFirer({
    store,
    control,
    preflight: preflightRunner(
      options.preflightCommand ?? [],
      options.preflightTimeoutMs ?? 10_000,
      { ...process.env, ...options.workerEnv },
      paths.stateDir,
    ),
    log,
    now,
    fired: () => holder.clock?.arm(),
    launching: () => supervisor.wakeIdleWorker(),
  });
  const clock = new WakeClock({
    store,
    supervisor,
    schedules,
    log,
    now,
    answerDue: (runId) => control.answerAtDeadline(runId),
    more: [new WallBudgets({ store, supervisor, log, now })],
  });
  const sockets = new Set<Socket>();
  let stopping: Promise<void> | null = null;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    serveClient(
      socket,
      {
        store,
        control,
        schedules,
        supervisor,
        live,
        liveTranscripts: progress.live,
        turns,
        piSdk,
        publisher,
        info,
        messageLeaseMs: options.messageLeaseMs ?? 60_000,
        requestStop: () => setImmediate(() => void stop()),
        rearm: () => clock.arm(),
      },
      log,
    );
  });
  server.on("error", (error) => log(`socket server: ${describeBug(error)}`));

  const reconcileDeps = {
    store,
    supervisor,
    control,
    log,
    now,
    ...(options.reconcilePageSize === undefined ? {} : { pageSize: options.reconcilePageSize }),
  };
  let sweep: NodeJS.Timeout | null = null;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      log("host: stopping");
      if (sweep) clearInterval(sweep);
      clock.stop();
      schedules.stop();
      server.close();
      for (const socket of sockets) {
        socket.end();
        setTimeout(() => socket.destroy(), 500).unref();
      }
      await supervisor.stop(options.stopGraceMs ?? 5_000);
      publisher.close();
      store.close();
      try {
        unlinkIfPresent(paths.socketPath);
      } catch (error) {
        log(`host: could not remove ${paths.socketPath}: ${describeBug(error)}`);
      }
      lock.release();
      log("host: stopped");
      resolveStopped();
    })();
    return stopping;
  };

  try {
    reconcileAtStart(reconcileDeps);
    // Waits and retry pauses that fell due while no host ran wake now; the rest arm the one timer.
    holder.clock = clock;
    clock.wakeDue();
    schedules.fireBuffered();
    // Only the lock holder may remove a socket: it can only be a dead host's.
    unlinkIfPresent(paths.socketPath);
    await listen(server, paths.socketPath);
    chmodSync(paths.socketPath, 0o600);
  } catch (error) {
    await stop();
    throw error;
  }
  sweep = setInterval(() => {
    try {
      sweepExpiredStarting(reconcileDeps);
    } catch (error) {
      log(`reconcile: sweep failed: ${describeBug(error)}`);
    }
  }, options.sweepIntervalMs ?? 5_000);
  sweep.unref();
  log(`host: serving ${paths.socketPath} (pid ${process.pid}, ${info.synchronous})`);
  return {
    pid: process.pid,
    stateDir: paths.stateDir,
    socketPath: paths.socketPath,
    reader: store,
    stopped,
    stop,
  };
}
