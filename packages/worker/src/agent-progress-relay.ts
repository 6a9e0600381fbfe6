import { type IsolatedStep, LatestThrottle } from "@piw/engine";
import type { IsolatedProgress } from "@piw/pi-agent";
import { type AgentProgress, progressText } from "@piw/protocol";

/** The least time between two progress facts the worker sends; the latest waits out the rest. */
const PROGRESS_INTERVAL_MS = 200;

/**
 * Relays an isolated step's progress to the host as `agent.progress`, rate-limited: at most one
 * fact per PROGRESS_INTERVAL_MS, the latest one winning (its `toolCalls` still counts every call).
 * An accepted output goes at once, so it reaches the host before the visit's end does.
 */
export class AgentProgressRelay {
  private seq = 0;
  private attemptKey = "";
  private toolCalls = 0;
  private readonly throttle: LatestThrottle<AgentProgress>;

  constructor(send: (progress: AgentProgress) => void) {
    this.throttle = new LatestThrottle(send, PROGRESS_INTERVAL_MS);
  }

  report(step: IsolatedStep, event: IsolatedProgress): void {
    const key = `${step.path}\u0000${step.visit}\u0000${step.attempt}`;
    if (key !== this.attemptKey) {
      this.attemptKey = key;
      this.toolCalls = 0;
    }
    if (event.kind === "tool") this.toolCalls += 1;
    this.seq += 1;
    const progress = {
      path: step.path,
      visit: step.visit,
      attempt: step.attempt,
      seq: this.seq,
      toolCalls: this.toolCalls,
      kind: event.kind,
      text: progressText(event.text),
    };
    this.throttle.push(progress, event.kind === "submitted");
  }
}
