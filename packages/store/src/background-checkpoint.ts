import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { SynchronousMode } from "./open-database.js";

/**
 * The thread's whole program: its own connection to the state file, which only ever runs PASSIVE
 * checkpoints. A PASSIVE checkpoint copies committed WAL frames into the database file without
 * taking the write lock, so the writer's commits go on while it works.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.binding);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("synchronous = " + workerData.synchronous);
db.pragma("busy_timeout = 0");
parentPort.on("message", (message) => {
  if (message !== "checkpoint") return;
  try {
    const row = db.pragma("wal_checkpoint(PASSIVE)")[0];
    parentPort.postMessage({ kind: "checkpointed", busy: row.busy, log: row.log, done: row.checkpointed });
  } catch (error) {
    parentPort.postMessage({ kind: "failed", code: String((error && error.code) || "unknown") });
  }
});
parentPort.postMessage({ kind: "ready" });
`;

/** SQLite's own default: checkpoint inside the commit that takes the WAL past this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

type ThreadMessage =
  | { kind: "ready" }
  | { kind: "checkpointed"; busy: number; log: number; done: number }
  | { kind: "failed"; code: string };

export interface BackgroundCheckpointOptions {
  /** How long committed frames may wait for a checkpoint when few commits come (default 1 s). */
  intervalMs?: number;
  /** Commits after which a checkpoint starts at once (default 200: about SQLite's 1,000 pages). */
  commitsPerCheckpoint?: number;
  /** Told once when the thread cannot be used and SQLite's own checkpoints are back on. */
  onFallback?(why: string): void;
  /** Another program for the thread: tests use it to make the thread fail. */
  threadSource?: string;
}

/**
 * Takes WAL checkpoints off the writer's commits. SQLite checkpoints inside the commit that grows the
 * WAL past 1,000 pages, which stalls that one commit (and the host's event loop, better-sqlite3 being
 * synchronous) for several milliseconds, more at FULL. Here a thread with its own connection runs
 * them instead, about as often as SQLite would (every 200 commits), and once a second after fewer. Until the thread says it is ready,
 * and again if it ever fails, the writer keeps SQLite's own automatic checkpoints: the WAL never
 * grows without bound.
 */
export class BackgroundCheckpointer {
  private worker: Worker | null;
  private ready = false;
  /** Commits since the last checkpoint was asked for. */
  private pending = 0;
  private inFlight = false;
  private finished = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Database.Database,
    file: string,
    synchronous: SynchronousMode,
    private readonly options: BackgroundCheckpointOptions = {},
  ) {
    const binding = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(options.threadSource ?? THREAD_SOURCE, {
      eval: true,
      workerData: { binding, file, synchronous },
    });
    this.worker.unref();
    this.worker.on("message", (message: ThreadMessage) => this.onMessage(message));
    this.worker.on("error", (error) => this.fallBack(`the checkpoint thread failed (${error.name})`));
    this.worker.on("exit", (code) => this.fallBack(`the checkpoint thread exited (${code})`));
    this.timer = setInterval(() => this.tick(), options.intervalMs ?? 1000);
    this.timer.unref();
  }

  /** Whether checkpoints run on the thread now (false before it is ready and after a fallback). */
  get active(): boolean {
    return this.ready && this.worker !== null;
  }

  /** Checkpoints the thread has finished. */
  get completed(): number {
    return this.finished;
  }

  /** A transaction committed: the WAL has frames to copy. */
  noteCommit(): void {
    this.pending += 1;
    if (this.pending >= (this.options.commitsPerCheckpoint ?? 200)) this.tick();
  }

  /** Stop the thread. The writer's own close then checkpoints what is left, as SQLite always does. */
  close(): void {
    clearInterval(this.timer);
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    worker.removeAllListeners();
    void worker.terminate();
  }

  private onMessage(message: ThreadMessage): void {
    switch (message.kind) {
      case "ready":
        if (this.worker === null) return;
        this.db.pragma("wal_autocheckpoint = 0");
        this.ready = true;
        return;
      case "checkpointed":
        this.inFlight = false;
        this.finished += 1;
        return;
      case "failed":
        this.inFlight = false;
        // A busy or locked database only means "not now": the next tick tries again.
        if (message.code !== "SQLITE_BUSY" && message.code !== "SQLITE_LOCKED") {
          this.fallBack(`a background checkpoint failed (${message.code.slice(0, 64)})`);
        }
        return;
      default:
        message satisfies never;
    }
  }

  private tick(): void {
    if (!this.active || this.inFlight || this.pending === 0) return;
    this.pending = 0;
    this.inFlight = true;
    this.worker?.postMessage("checkpoint");
  }

  private fallBack(why: string): void {
    if (this.worker === null) return;
    this.close();
    this.ready = false;
    try {
      this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The writer is closing or closed: nothing is left to protect.
    }
    this.options.onFallback?.(why);
  }
}
