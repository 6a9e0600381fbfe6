import type { AgentProgress, RunView } from "@piw/protocol";
import type { Style } from "./style.js";

/**
 * The lines a follower prints for an isolated agent step's live progress: one per tool call the
 * host relayed (a rate limit may fold several into one, said as "+N more") and the accepted output.
 */
export class AgentProgressLines {
  private lastSeen = "";
  private lastAttempt = "";
  private toolCallsShown = 0;

  constructor(private readonly style: Style) {}

  changes(view: RunView): string[] {
    const progress = view.agentProgress;
    if (!progress) return [];
    // A relaunched worker counts from 1 again: a fact is new when its attempt or its number is.
    const seen = `${progress.path}#${progress.visit}.${progress.attempt}:${progress.seq}`;
    if (seen === this.lastSeen) return [];
    this.lastSeen = seen;
    return [this.lineOf(progress)];
  }

  private lineOf(progress: AgentProgress): string {
    const attempt = `${progress.path}#${progress.visit}.${progress.attempt}`;
    if (attempt !== this.lastAttempt) {
      this.lastAttempt = attempt;
      this.toolCallsShown = 0;
    }
    const where = this.style.dim(`${progress.path}:`);
    if (progress.kind === "submitted") return `    ${where} submitted ${progress.text}`;
    const folded = progress.toolCalls - this.toolCallsShown - 1;
    this.toolCallsShown = progress.toolCalls;
    return `    ${where} → ${progress.text}${folded > 0 ? this.style.dim(` (+${folded} more)`) : ""}`;
  }
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_MS = 120;

/**
 * A spinner with the running step and its elapsed time, on the last line of a terminal; `clear`
 * takes it away before a line is printed and the next frame draws it again. Only when `enabled`
 * (a terminal without NO_COLOR): otherwise it draws nothing, so logs and pipes get no animation.
 */
export class StepSpinner {
  private timer: NodeJS.Timeout | undefined;
  private label: string | undefined;
  private since = 0;
  private frame = 0;
  private drawn = false;

  constructor(
    private readonly out: { write(text: string): unknown },
    private readonly enabled: boolean,
  ) {}

  /** Show what runs now (a step path), or nothing. */
  update(view: RunView): void {
    if (!this.enabled) return;
    const work = view.currentWork;
    const label = work.kind === "none" ? undefined : (work.path ?? undefined);
    if (label !== this.label) {
      this.label = label;
      this.since = Date.now();
    }
    if (label === undefined) this.stop();
    else this.timer ??= setInterval(() => this.draw(), FRAME_MS);
  }

  clear(): void {
    if (!this.drawn) return;
    this.out.write("\r\u001b[2K");
    this.drawn = false;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private draw(): void {
    if (this.label === undefined) return;
    this.frame = (this.frame + 1) % FRAMES.length;
    const seconds = Math.floor((Date.now() - this.since) / 1000);
    this.out.write(`\r\u001b[2K${FRAMES[this.frame]} ${this.label} ${seconds}s`);
    this.drawn = true;
  }
}
