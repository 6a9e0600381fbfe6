/** How a run asked to be activated; kept while it waits so its claim is the one it asked for. */
export interface ActivationKind {
  resume?: true;
  acceptChanges?: true;
  wake?: true;
}

export interface SlotRequest {
  why: string;
  how: ActivationKind;
}

/** Where a run waiting for a worker stands: its place in line (1 is next) and the host's worker cap. */
export interface SlotWait {
  position: number;
  cap: number;
}

/**
 * The line of runs waiting for a worker while the host runs its cap of workers (`PIW_MAX_WORKERS`),
 * first come first served. It lives in memory only: a waiting run is still `queued` or `parked` in the
 * store, so a restarted host lines its queued runs up again, oldest first, and its clock re-wakes due
 * ones; only an explicit resume that was waiting is forgotten with the host.
 */
export class WorkerSlots {
  private readonly waiting = new Map<string, SlotRequest>();

  constructor(readonly cap: number) {}

  get size(): number {
    return this.waiting.size;
  }

  /** Line the run up (a run already waiting keeps its place); returns its place. */
  enqueue(runId: string, request: SlotRequest): number {
    this.waiting.set(runId, request);
    return this.position(runId) ?? this.waiting.size;
  }

  /** The next run in line, taken out of it. */
  next(): [string, SlotRequest] | undefined {
    const first = this.waiting.entries().next();
    if (first.done === true) return undefined;
    this.waiting.delete(first.value[0]);
    return first.value;
  }

  drop(runId: string): void {
    this.waiting.delete(runId);
  }

  wait(runId: string): SlotWait | undefined {
    const position = this.position(runId);
    return position === undefined ? undefined : { position, cap: this.cap };
  }

  private position(runId: string): number | undefined {
    if (!this.waiting.has(runId)) return undefined;
    let place = 0;
    for (const id of this.waiting.keys()) {
      place += 1;
      if (id === runId) return place;
    }
    return undefined;
  }
}
