import type { IsolatedStep } from "@piw/engine";
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
  private lastSentAt = 0;
  private pending: AgentProgress | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly send: (progress: AgentProgress) => void) {}

  report(step: IsolatedStep, event: IsolatedProgress): void {
    const key = `${step.path}\u0000${step.visit}\u0000${step.attempt}`;
    if (key !== this.attemptKey) {
      this.attemptKey = key;
      this.toolCalls = 0;
    }
    if (event.kind === "tool") this.toolCalls += 1;
    this.seq += 1;
    this.pending = {
      path: step.path,
      visit: step.visit,
      attempt: step.attempt,
      seq: this.seq,
      toolCalls: this.toolCalls,
      kind: event.kind,
      text: progressText(event.text),
    };
    const wait = this.lastSentAt + PROGRESS_INTERVAL_MS - Date.now();
    if (event.kind === "submitted" || wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const progress = this.pending;
    this.pending = undefined;
    if (!progress) return;
    this.lastSentAt = Date.now();
    this.send(progress);
  }
}
