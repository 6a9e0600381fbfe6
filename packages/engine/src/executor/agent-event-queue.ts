import type { AgentEvent } from "./run-port.js";

/**
 * Agent events handed over in process: whoever drives the run pushes submissions and turn ends, the
 * waiting agent step takes them in order. Used by ports that live in the same process as their driver.
 */
export class AgentEventQueue {
  private readonly queued: AgentEvent[] = [];
  private waiter: ((event: AgentEvent) => void) | null = null;

  push(event: AgentEvent): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = null;
      waiter(event);
    } else {
      this.queued.push(event);
    }
  }

  /** The next event; rejects with the signal's reason when it aborts first. */
  next(signal: AbortSignal): Promise<AgentEvent> {
    const queued = this.queued.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      this.waiter = resolve;
    });
  }
}
