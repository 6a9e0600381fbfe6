import type { AgentProgress, NodeProgress, NodeView, RunView } from "@piw/protocol";
import { filledBar } from "./bar.js";
import { formatAge } from "./format.js";
import type { Glyphs } from "./glyphs.js";

// How every piw surface words a running step's progress: `piw status`, `piw run`, the Pi widget and
// footer, and the viewer all call these, so a count, a bar and an estimate read the same everywhere.

type EtaConfidence = NonNullable<NodeProgress["eta"]>["confidence"];

/** The progress of a running node's current visit, if it reported any. */
export function nodeProgressOf(
  view: Pick<RunView, "progress">,
  node: Pick<NodeView, "path" | "visits" | "state">,
): NodeProgress | undefined {
  if (node.state !== "running") return undefined;
  return (view.progress ?? []).find((p) => p.path === node.path && p.visit === node.visits);
}

/**
 * This running node's own isolated agent step's latest fact: its entry in `agentActivity` (one per
 * running agent visit, so parallel branches each keep theirs), or, from a host that sends only the
 * run's latest fact, `agentProgress` when that fact is this visit's.
 */
export function agentProgressOf(
  view: Pick<RunView, "agentProgress" | "agentActivity">,
  node: Pick<NodeView, "path" | "visits" | "state">,
): AgentProgress | undefined {
  if (node.state !== "running") return undefined;
  const mine = (p: AgentProgress) => p.path === node.path && p.visit === node.visits;
  const own = view.agentActivity?.find(mine);
  if (own !== undefined) return own;
  const latest = view.agentProgress;
  return latest !== undefined && mine(latest) ? latest : undefined;
}

/** A reported number: whole numbers as they are, fractions to one decimal. */
function amount(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 10) / 10);
}

/**
 * `3/10`, `3 done` (no total), `?/10` (no count yet), `45%` (a total of 1: a fraction), or "" when
 * neither was reported.
 */
export function progressCount(progress: Pick<NodeProgress, "done" | "total">): string {
  const { done, total } = progress;
  if (done !== null && total === 1 && !Number.isInteger(done)) return `${Math.round(done * 100)}%`;
  if (done !== null && total !== null) return `${amount(done)}/${amount(total)}`;
  if (done !== null) return `${amount(done)} done`;
  return total !== null ? `?/${amount(total)}` : "";
}

/** A bar of `cells` columns, filled to done/total; "" without both, or with a total of 0. */
export function progressBar(
  progress: Pick<NodeProgress, "done" | "total">,
  cells: number,
  g: Glyphs,
): string {
  const { done, total } = progress;
  if (done === null || total === null || total <= 0 || cells <= 0) return "";
  const filled = filledBar(done / total, cells, g);
  return filled + g.bar.track.repeat(Math.max(0, cells - [...filled].length));
}

/** A remaining time as a person would say it, coarser the less sure the estimate is. */
function amountLeft(ms: number, confidence: EtaConfidence): string {
  const seconds = Math.max(1, Math.ceil(ms / 1_000));
  if (confidence === "high" && seconds < 55) return `${Math.ceil(seconds / 5) * 5}s`;
  let minutes = Math.max(1, Math.round(seconds / 60));
  if (confidence === "low" && minutes >= 10) minutes = Math.round(minutes / 5) * 5;
  if (minutes < 60) return `${minutes} min`;
  if (confidence === "low") return `${Math.round(minutes / 30) / 2} h`;
  return minutes % 60 === 0 ? `${minutes / 60} h` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What a confidence puts before the amount: nothing when sure, `about`, `roughly` (or `~`). */
const QUALIFIERS: Readonly<Record<EtaConfidence, { words: string; compact: string; mark: string }>> = {
  high: { words: "", compact: "", mark: "" },
  medium: { words: "about ", compact: "~", mark: "" },
  low: { words: "roughly ", compact: "~", mark: "?" },
};

function clockTime(at: number): string {
  const date = new Date(at);
  return `${String(date.getHours()).padStart(2, "0")}:${String(date.getMinutes()).padStart(2, "0")}`;
}

/**
 * The estimate in words: `2 min left`, `about 2 min left`, `roughly 5 min left`; compact (footer,
 * graph cards): `2 min left`, `~2 min left`, `~5 min left?`. Past its time: `due now` (`about due
 * now`). Without `now` (a printed line that is never redrawn) it names the clock time instead:
 * `done by 14:05`, `done about 14:05`.
 */
export function etaWords(eta: NodeProgress["eta"], now: number | undefined, compact = false): string {
  if (eta === null) return "";
  const q = QUALIFIERS[eta.confidence];
  const qualifier = compact ? q.compact : q.words;
  const mark = compact ? q.mark : "";
  if (now === undefined) {
    const at = clockTime(eta.at);
    if (compact) return eta.confidence === "high" ? `by ${at}` : `${qualifier}${at}${mark}`;
    return `done ${eta.confidence === "high" ? "by " : qualifier}${at}`;
  }
  if (eta.at <= now) return `${qualifier}due now${mark}`;
  return `${qualifier}${amountLeft(eta.at - now, eta.confidence)} left${mark}`;
}

export interface ProgressWordsOptions {
  now?: number | undefined;
  glyphs: Glyphs;
  /** Columns of the bar; 0 or absent draws none. */
  bar?: number;
  /** The short qualifiers (`~`), for the footer and the graph's cards. */
  compact?: boolean;
  /** Leave the message out (it is shown elsewhere, or there is no room). */
  noMessage?: boolean;
}

/**
 * One line of progress: `3/10 ███░░░░░░░ · about 2 min left · indexing files`. The count and the
 * estimate come before the message, so a line cut at the right keeps what matters most.
 */
export function progressWords(progress: NodeProgress, options: ProgressWordsOptions): string {
  const head = [progressCount(progress), progressBar(progress, options.bar ?? 0, options.glyphs)]
    .filter((part) => part !== "")
    .join(" ");
  const parts = [head, etaWords(progress.eta, options.now, options.compact)];
  if (!options.noMessage && progress.message !== null) parts.push(progress.message.replace(/\s+/g, " "));
  return parts.filter((part) => part !== "").join(` ${options.glyphs.dot} `);
}

/**
 * The run's run-wide progress (`ctx.progress` with `scope: "run"`), shown while the run lives, parked
 * between steps too: `3/100 ███░░ · 2 h left · not met yet`. "" when the run reported none.
 */
export function runProgressWords(view: Pick<RunView, "runProgress">, options: ProgressWordsOptions): string {
  return view.runProgress === undefined ? "" : progressWords(view.runProgress, options);
}

/** The estimate with its confidence spelled out, and when the step last reported: for the inspector. */
export function progressDetail(progress: NodeProgress, now: number | undefined): string[] {
  const lines: string[] = [];
  if (progress.eta !== null) {
    const words = etaWords(progress.eta, now);
    lines.push(`estimate  ${words} (${progress.eta.confidence} confidence)`);
  }
  if (now !== undefined) lines.push(`reported  ${formatAge(progress.updatedAt, now)}`);
  return lines;
}

/** An isolated agent step's latest fact: `→ read src/a.ts` (`->` in ASCII), or `submitted {"ok":true}`. */
export function agentProgressText(progress: Pick<AgentProgress, "kind" | "text">, ascii = false): string {
  return progress.kind === "submitted"
    ? `submitted ${progress.text}`
    : `${ascii ? "->" : "→"} ${progress.text}`;
}

/** The fact with how many tools the attempt called: `→ read src/a.ts (4 tool calls)`. */
export function agentProgressWords(progress: AgentProgress, ascii = false): string {
  const calls =
    progress.toolCalls === 0
      ? ""
      : ` (${progress.toolCalls} tool call${progress.toolCalls === 1 ? "" : "s"})`;
  return `${agentProgressText(progress, ascii)}${calls}`;
}

/**
 * What a running node is doing beyond its state, on one line: its progress, then its agent's latest
 * tool call. "" when it reported neither.
 */
export function runningDetail(
  view: Pick<RunView, "progress" | "agentProgress" | "agentActivity">,
  node: Pick<NodeView, "path" | "visits" | "state">,
  options: ProgressWordsOptions,
): string {
  const progress = nodeProgressOf(view, node);
  const agent = agentProgressOf(view, node);
  const parts = [
    progress === undefined ? "" : progressWords(progress, options),
    agent === undefined ? "" : agentProgressText(agent, options.glyphs.ascii),
  ];
  return parts.filter((part) => part !== "").join(` ${options.glyphs.dot} `);
}
