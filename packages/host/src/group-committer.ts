import type { RunStore } from "@piw/store";

/** The most requests one commit takes; a longer queue is committed in several, each replied to at once. */
const MAX_GROUP = 128;

export interface GroupCommitterOptions {
  store: RunStore;
  /** Off: every request commits alone, the moment it arrives (the behaviour before group commit). */
  enabled: boolean;
  /** After a commit, once per run it touched: reconcile and publish (a view per batch, not per request). */
  runChanged(runId: string): void;
  maxGroup?: number;
  /** Diagnostics and tests: after each commit of the queue, how many requests it held. */
  committed?(requests: number): void;
}

interface Queued {
  runId: string;
  write: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit across runs. better-sqlite3 blocks the host's one thread for each commit's sync, so the
 * durable requests of other workers that come in meanwhile wait in their pipes; the next turn of the
 * event loop reads them all. Queued on arrival and drained in the same turn's check phase
 * (`setImmediate`), they are committed together: one transaction, one sync, each request in its own
 * savepoint with its own result. A lone request waits for no timer. Replies leave only after the
 * commit, so every reply still means "saved".
 */
export class GroupCommitter {
  private readonly queue: Queued[] = [];
  private scheduled = false;
  private readonly maxGroup: number;

  constructor(private readonly options: GroupCommitterOptions) {
    this.maxGroup = Math.max(1, options.maxGroup ?? MAX_GROUP);
  }

  /** Apply `write` (store calls only) for `runId`; resolves with its result once it is committed. */
  submit<T>(runId: string, write: () => T): Promise<T> {
    if (!this.options.enabled) {
      try {
        const value = write();
        this.options.runChanged(runId);
        return Promise.resolve(value);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ runId, write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.drain());
    });
  }

  /** Requests waiting for their commit. */
  get pending(): number {
    return this.queue.length;
  }

  private drain(): void {
    this.scheduled = false;
    const group = this.queue.splice(0, this.maxGroup);
    // More than one group's worth: the rest goes in the next check phase, after these replies left.
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
    if (group.length === 0) return;
    let outcomes: ReturnType<RunStore["commitGroup"]>;
    try {
      outcomes = this.options.store.commitGroup(group.map((queued) => queued.write));
    } catch (error) {
      // The store is closed (the host is stopping): nothing was applied.
      for (const queued of group) queued.reject(error);
      return;
    }
    this.options.committed?.(group.length);
    for (const runId of new Set(group.map((queued) => queued.runId))) this.options.runChanged(runId);
    group.forEach((queued, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) queued.resolve(outcome.value);
      else queued.reject(outcome?.error);
    });
  }
}
