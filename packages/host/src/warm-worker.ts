import { PROTOCOL_VERSION } from "@piw/protocol";
import type { HostLog } from "./host-log.js";
import { spawnWorker, type WorkerProcess } from "./worker-process.js";

/** Where a worker's output and exit go: the idle slot first, then the launch it is assigned to. */
interface WorkerBinding {
  /** How the host log names this worker. */
  label: string;
  onStdout(chunk: string): void;
  onGone(how: string): void;
}

/** A started worker process that belongs to no launch yet. */
export interface SpareWorker {
  readonly process: WorkerProcess;
  /** Route the worker's output and exit to its launch from now on. */
  bind(binding: WorkerBinding): void;
}

export interface WarmWorkerOptions {
  command: string[];
  /** The host's environment for workers (PIW_HOME included, never a launch ID). */
  env: Record<string, string>;
  /** Idle workers start in the state dir; an assigned one moves to its run's directory itself. */
  cwd: string;
  log: HostLog;
  /** How long a woken idle worker waits for its launch before a fresh, unloaded one replaces it. */
  wakeLingerMs?: number;
}

/** First wait before replacing an idle worker that died; doubled per death in a row, up to the cap. */
const RESPAWN_BACKOFF_MS = 250;
const RESPAWN_BACKOFF_MAX_MS = 30_000;

/**
 * A woken idle worker holds its loaded modules (about 15–20 MiB more, for good: V8 does not give it
 * back). A wake is followed by its launch within a second unless the launch failed or was given up, or
 * it was the one after a launch: then, after this long without one, a light worker replaces it.
 */
const WAKE_LINGER_MS = 30_000;
/** How long a replaced idle worker gets to exit on its closed channel before it is killed. */
const RETIRE_GRACE_MS = 2_000;

// Written by hand: the idle worker has no peer yet (its launch makes one); `workerPushes.wake` is its shape.
const WAKE_FRAME = `${JSON.stringify({ v: PROTOCOL_VERSION, push: "wake", data: {} })}\n`;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Keeps one worker process started ahead of time and waiting on its channel, so an activation does not
 * pay for Node's start-up. Idle, it has loaded nothing of ours; `wake()` (a launch is coming) has it
 * load what a run needs before the assignment. `take()` hands it over (or starts a fresh one when none
 * is ready) and starts the next in the background, woken.
 */
export class WarmWorker {
  private idle: SpareWorker | null = null;
  private respawnTimer: NodeJS.Timeout | null = null;
  /** Set while the idle worker is woken: replaces it when no launch takes it in time. */
  private lingerTimer: NodeJS.Timeout | null = null;
  /** Idle workers that died in a row, for the backoff; reset when one is handed to a launch. */
  private deaths = 0;
  private closed = false;

  constructor(private readonly options: WarmWorkerOptions) {}

  /** The idle worker's pid, if one is waiting. */
  idlePid(): number | null {
    return this.idle?.process.pid ?? null;
  }

  /**
   * A launch is coming (a client said so, a reserve or a schedule firing began): the idle worker loads
   * its modules now, so the assignment finds it ready. Once per idle worker; nothing when none waits.
   */
  wake(): void {
    const spare = this.idle;
    if (spare === null || this.lingerTimer !== null) return;
    spare.process.send(WAKE_FRAME);
    this.lingerTimer = setTimeout(() => this.retire(spare), this.options.wakeLingerMs ?? WAKE_LINGER_MS);
    this.lingerTimer.unref();
  }

  /** Start an idle worker if none is waiting or scheduled. */
  fill(): void {
    if (this.closed || this.idle !== null || this.respawnTimer !== null) return;
    const spare = this.start();
    this.options.log(`worker pool: idle worker started (pid ${spare.process.pid ?? "none"})`);
    this.idle = spare;
  }

  /**
   * The worker for a new launch: the idle one, or (none ready: the host just started, two activations
   * in a row, a respawn in backoff) a fresh process, which reads its assignment once it has loaded.
   */
  take(): SpareWorker {
    const spare = this.idle ?? this.start();
    this.idle = null;
    this.clearLinger();
    this.deaths = 0;
    // The next one starts after this turn, so the caller's assignment is written first. It loads at
    // once: launches come in bursts (a run's continuation, a script's runs), and one with no launch
    // after it is replaced by a light one when the wake's linger ends.
    setImmediate(() => {
      this.fill();
      this.wake();
    });
    return spare;
  }

  /** No more idle workers: close the waiting one's channel (it exits), and kill it if it lingers. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    if (this.respawnTimer) clearTimeout(this.respawnTimer);
    this.respawnTimer = null;
    this.clearLinger();
    const spare = this.idle;
    this.idle = null;
    if (!spare) return;
    spare.process.closeChannel();
    await Promise.race([spare.process.gone, delay(graceMs)]);
    spare.process.kill();
  }

  private clearLinger(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  /** The woken worker's launch never came: a fresh one, which has loaded nothing, takes its place. */
  private retire(spare: SpareWorker): void {
    this.lingerTimer = null;
    if (this.idle !== spare) return;
    this.idle = null;
    this.options.log(`worker pool: woken idle worker pid ${spare.process.pid ?? "none"} unused; replaced`);
    spare.process.closeChannel();
    void delay(RETIRE_GRACE_MS).then(() => spare.process.kill());
    this.fill();
  }

  private start(): SpareWorker {
    const { command, env, cwd, log } = this.options;
    // Until a launch binds it, the worker is this slot's: output is unexpected, an exit means replace it.
    let binding: WorkerBinding = {
      label: "idle",
      onStdout: () => {},
      onGone: (how) => this.idleGone(spare, how),
    };
    const proc = spawnWorker({
      command,
      env,
      cwd,
      onStderrLine: (line) => log(`worker ${binding.label}: ${line}`),
      onStdout: (chunk) => binding.onStdout(chunk),
      onGone: (how) => binding.onGone(how),
    });
    binding.label = `idle (pid ${proc.pid ?? "none"})`;
    const spare: SpareWorker = {
      process: proc,
      bind: (next) => {
        binding = next;
      },
    };
    return spare;
  }

  private idleGone(spare: SpareWorker, how: string): void {
    if (this.idle !== spare) return;
    this.idle = null;
    this.clearLinger();
    if (this.closed) return;
    this.deaths += 1;
    const wait = Math.min(RESPAWN_BACKOFF_MS * 2 ** (this.deaths - 1), RESPAWN_BACKOFF_MAX_MS);
    this.options.log(
      `worker pool: idle worker pid ${spare.process.pid ?? "none"} gone (${how}); next in ${wait} ms`,
    );
    this.respawnTimer = setTimeout(() => {
      this.respawnTimer = null;
      this.fill();
    }, wait);
    this.respawnTimer.unref();
  }
}
