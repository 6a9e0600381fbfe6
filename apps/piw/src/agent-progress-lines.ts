import type { AgentProgress, NodeProgress, RunView } from "@piw/protocol";
import { agentProgressText, clipToWidth, nodeProgressOf, progressWords, UNICODE_GLYPHS } from "@piw/viewer";
import type { Style } from "./style.js";

/**
 * The lines a follower prints for isolated agent steps' live progress: one per tool call the host
 * relayed (a rate limit may fold several into one, said as "+N more") and the accepted output. Each
 * running agent visit (parallel branches run several) is followed on its own, under its own path.
 */
export class AgentProgressLines {
  /** Per visit (`path#visit`): the last fact printed, its attempt, and the tool calls it counted. */
  private readonly visits = new Map<string, { seen: string; attempt: number; toolCallsShown: number }>();

  constructor(private readonly style: Style) {}

  changes(view: RunView): string[] {
    const lines: string[] = [];
    for (const progress of factsOf(view)) {
      const key = `${progress.path}#${progress.visit}`;
      // A relaunched worker counts from 1 again: a fact is new when its attempt or its number is.
      const seen = `${progress.attempt}:${progress.seq}`;
      const shown = this.visits.get(key);
      if (shown?.seen === seen) continue;
      const toolCallsShown = shown?.attempt === progress.attempt ? shown.toolCallsShown : 0;
      this.visits.set(key, {
        seen,
        attempt: progress.attempt,
        toolCallsShown: progress.kind === "tool" ? progress.toolCalls : toolCallsShown,
      });
      lines.push(this.lineOf(progress, toolCallsShown));
    }
    return lines;
  }

  private lineOf(progress: AgentProgress, toolCallsShown: number): string {
    const where = this.style.dim(`${progress.path}:`);
    if (progress.kind === "submitted") return `    ${where} ${agentProgressText(progress)}`;
    const folded = progress.toolCalls - toolCallsShown - 1;
    return `    ${where} ${agentProgressText(progress)}${folded > 0 ? this.style.dim(` (+${folded} more)`) : ""}`;
  }
}

/** Each running agent visit's latest fact, then the run's latest when its visit is not among them. */
function factsOf(view: RunView): AgentProgress[] {
  const facts = [...(view.agentActivity ?? [])];
  const latest = view.agentProgress;
  if (latest !== undefined && !facts.some((p) => p.path === latest.path && p.visit === latest.visit))
    facts.push(latest);
  return facts;
}

/** Tenths of the total: a count prints a line each time it enters a new one. */
const PROGRESS_STEPS = 10;

/**
 * The lines a follower prints for a running step's reported progress: the first report, a new
 * message, and each tenth of the total reached. A line printed once is never redrawn, so the
 * estimate names a clock time (`done about 14:05`) rather than a count that would go stale.
 */
export class NodeProgressLines {
  private readonly printed = new Map<string, string>();

  constructor(private readonly style: Style) {}

  changes(view: RunView): string[] {
    const lines: string[] = [];
    for (const node of view.nodes) {
      const progress = nodeProgressOf(view, node);
      if (progress === undefined) continue;
      const step =
        progress.done !== null && progress.total !== null && progress.total > 0
          ? Math.floor((Math.min(progress.done, progress.total) / progress.total) * PROGRESS_STEPS)
          : progress.done;
      const key = `${progress.visit}:${step}:${progress.message ?? ""}`;
      if (this.printed.get(progress.path) === key) continue;
      this.printed.set(progress.path, key);
      const words = progressWords(progress, { glyphs: UNICODE_GLYPHS, bar: 10 });
      lines.push(`    ${this.style.dim(`${progress.path}:`)} ${words}`);
    }
    return lines;
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
  private progress: NodeProgress | undefined;
  private since = 0;
  private frame = 0;
  private drawn = false;

  constructor(
    private readonly out: { write(text: string): unknown; columns?: number },
    private readonly enabled: boolean,
  ) {}

  private columns(): number {
    return Math.max(10, (this.out.columns ?? 80) - 1);
  }

  /** Show what runs now (a step path), or nothing. */
  update(view: RunView): void {
    if (!this.enabled) return;
    const work = view.currentWork;
    const label =
      work.kind === "none" || work.kind === "waiting_for_worker" ? undefined : (work.path ?? undefined);
    if (label !== this.label) {
      this.label = label;
      this.since = Date.now();
    }
    const node = label === undefined ? undefined : view.nodes.find((n) => n.path === label);
    this.progress = node === undefined ? undefined : nodeProgressOf(view, node);
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
    const now = Date.now();
    const seconds = Math.floor((now - this.since) / 1000);
    const progress =
      this.progress === undefined
        ? ""
        : `  ${progressWords(this.progress, { glyphs: UNICODE_GLYPHS, now, compact: true, noMessage: true })}`;
    // One terminal row: a spinner line that wrapped would leave its first half behind.
    const line = `${FRAMES[this.frame]} ${this.label} ${seconds}s${progress}`;
    this.out.write(`\r\u001b[2K${clipToWidth(line, this.columns())}`);
    this.drawn = true;
  }
}
