import { type IsolatedStep, LatestThrottle } from "@piw/engine";
import type { IsolatedProgress } from "@piw/pi-agent";
import { type AgentProgress, progressText } from "@piw/protocol";

/** The least time between two progress facts the worker sends; the latest waits out the rest. */
const PROGRESS_INTERVAL_MS = 200;

/** The most agent attempts the relay follows at once; the one reported least recently goes first. */
const ATTEMPTS_FOLLOWED_MAX = 64;

interface Followed {
  toolCalls: number;
  throttle: LatestThrottle<AgentProgress>;
}

/**
 * Relays isolated steps' progress to the host as `agent.progress`, each fact naming its step's path
 * and visit. Parallel branches run several agent steps in one worker at once, so each attempt is
 * followed on its own: its own tool call count and its own rate limit, at most one fact per
 * PROGRESS_INTERVAL_MS, the latest one winning (its `toolCalls` still counts every call), so one
 * branch's facts never stand in for another's. An accepted output goes at once, so it reaches the
 * host before the visit's end does, and ends that attempt's following.
 */
export class AgentProgressRelay {
  private seq = 0;
  private readonly attempts = new Map<string, Followed>();

  constructor(private readonly send: (progress: AgentProgress) => void) {}

  report(step: IsolatedStep, event: IsolatedProgress): void {
    const key = `${step.path}\u0000${step.visit}\u0000${step.attempt}`;
    const followed = this.attempts.get(key) ?? {
      toolCalls: 0,
      throttle: new LatestThrottle(this.send, PROGRESS_INTERVAL_MS),
    };
    this.attempts.delete(key);
    this.attempts.set(key, followed);
    if (event.kind === "tool") followed.toolCalls += 1;
    this.seq += 1;
    const progress = {
      path: step.path,
      visit: step.visit,
      attempt: step.attempt,
      seq: this.seq,
      toolCalls: followed.toolCalls,
      kind: event.kind,
      text: progressText(event.text),
    };
    followed.throttle.push(progress, event.kind === "submitted");
    if (event.kind === "submitted") this.attempts.delete(key);
    if (this.attempts.size > ATTEMPTS_FOLLOWED_MAX) {
      const [oldest, dropped] = this.attempts.entries().next().value ?? [];
      if (oldest !== undefined) this.attempts.delete(oldest);
      dropped?.throttle.flush();
    }
  }
}
