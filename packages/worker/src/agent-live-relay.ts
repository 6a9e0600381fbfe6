import { type IsolatedStep, LatestThrottle } from "@piw/engine";
import type { AgentLive, LiveTranscriptSnapshot } from "@piw/protocol";

/** The least time between two live transcripts of one attempt; the latest waits out the rest. */
const LIVE_INTERVAL_MS = 100;
/** The most attempts the relay follows at once; the one reported least recently goes first. */
const ATTEMPTS_FOLLOWED_MAX = 64;

/**
 * Relays isolated steps' live transcripts to the host as `agent.live`: at most one per attempt every
 * LIVE_INTERVAL_MS, the latest winning (each is the whole bounded transcript so far, so one that is
 * skipped loses nothing). Parallel branches' attempts are followed apart.
 */
export class AgentLiveRelay {
  private readonly attempts = new Map<string, LatestThrottle<AgentLive>>();

  constructor(private readonly send: (live: AgentLive) => void) {}

  report(step: IsolatedStep, live: LiveTranscriptSnapshot): void {
    const key = `${step.path}\u0000${step.visit}\u0000${step.attempt}`;
    const throttle = this.attempts.get(key) ?? new LatestThrottle(this.send, LIVE_INTERVAL_MS);
    this.attempts.delete(key);
    this.attempts.set(key, throttle);
    throttle.push({ path: step.path, visit: step.visit, attempt: step.attempt, live });
    if (this.attempts.size > ATTEMPTS_FOLLOWED_MAX) {
      const [oldest, dropped] = this.attempts.entries().next().value ?? [];
      if (oldest !== undefined) this.attempts.delete(oldest);
      dropped?.flush();
    }
  }
}
