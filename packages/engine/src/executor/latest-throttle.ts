/**
 * Sends the latest of a stream of values at most once per `intervalMs`: a value pushed sooner waits
 * out the rest of the interval, and a newer one replaces it meanwhile. `flush` sends what waits now
 * (a visit's last progress before its end); `push(value, true)` sends at once.
 */
export class LatestThrottle<T> {
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private pending: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly send: (value: T) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  push(value: T, immediate = false): void {
    this.pending = { value };
    const wait = this.lastSentAt + this.intervalMs - this.now();
    if (immediate || wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.pending;
    this.pending = undefined;
    if (!pending) return;
    this.lastSentAt = this.now();
    this.send(pending.value);
  }
}
