import { visibleWidth } from "@earendil-works/pi-tui";
import type { NodeView, RunView } from "@piw/protocol";
import { ANSWERED_BY_WORDS, quotedExample } from "./answer-example.js";
import { activePath, type FlowEntry, flowEntries } from "./flow.js";
import { formatDuration, formatTimeLeft } from "./format.js";
import { detectGlyphs, type Glyphs, UNICODE_GLYPHS } from "./glyphs.js";
import { nodeProgressOf, progressWords, runningDetail } from "./progress-words.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { NODE_TINTS, type NodeState, runStateWord } from "./words.js";
import { recoveryWords } from "./clock-words.js";

export interface WidgetOptions {
  /** Terminal columns; no line is wider. */
  width: number;
  /** Most lines to return, the recovery line included. Default 8. */
  maxLines?: number;
  /** When given, a running node shows how long it has run; without it the line says `running`. */
  now?: number;
  theme?: Theme;
  /** The symbols to draw with; default what this terminal can show. */
  glyphs?: Glyphs;
}

const DEFAULT_WIDGET_LINES = 8;

interface Timed {
  state: NodeState;
  visits: number;
  startedAt: number | null;
  finishedAt: number | null;
  deadlineAt?: number | null | undefined;
}

/** `#2  1.4s`, `#1  running 3.0s`, `#1  failed: timeout` — empty for an unvisited node. */
function timingText(item: Timed & { errorCode?: string | null; attempt?: number }, now?: number): string {
  if (item.visits === 0) return "";
  const parts = [`#${item.visits}`];
  if (item.attempt !== undefined && item.attempt > 1) parts.push(`try ${item.attempt}`);
  if (item.state === "running") {
    parts.push(
      now === undefined || item.startedAt === null
        ? "running"
        : `running ${formatDuration(now - item.startedAt)}`,
    );
    if (item.deadlineAt) parts.push(formatTimeLeft(item.deadlineAt, now));
  } else if (item.startedAt !== null && item.finishedAt !== null) {
    parts.push(formatDuration(item.finishedAt - item.startedAt));
  }
  if ((item.state === "failed" || item.state === "timed_out") && item.errorCode) parts.push(item.errorCode);
  return parts.join("  ");
}

function nodeLabel(node: NodeView): string {
  const name = node.path.slice(node.path.lastIndexOf("/") + 1);
  return node.title !== "" && node.title !== name ? `${node.path} ${node.title}` : node.path;
}

function entryPath(entry: FlowEntry): string {
  return entry.kind === "node" ? entry.node.path : entry.mount.path;
}

/** Fits `head label … tail` into `width`, shortening the label first. */
function fitLine(
  head: string,
  label: string,
  tail: string,
  labelWidth: number,
  width: number,
  ellipsis: string,
): string {
  const tailWidth = visibleWidth(tail);
  const room = width - visibleWidth(head) - (tailWidth > 0 ? tailWidth + 2 : 0);
  if (room < 4) return clipToWidth(`${head}${label}${tail === "" ? "" : `  ${tail}`}`, width, ellipsis);
  const column = Math.min(room, Math.max(labelWidth, 1));
  const fitted = visibleWidth(label) > column ? clipToWidth(label, column, ellipsis) : label;
  const padded = tail === "" ? fitted : fitted + " ".repeat(Math.max(0, column - visibleWidth(fitted)));
  return clipToWidth(`${head}${padded}${tail === "" ? "" : `  ${tail}`}`, width, ellipsis);
}

/** Columns of the progress bar on a running node's widget line. */
const WIDGET_BAR_CELLS = 8;
/** A running node's progress is added only when at least this much of it fits. */
const MIN_DETAIL_COLUMNS = 6;

function entryLine(
  view: RunView,
  entry: FlowEntry,
  labelWidth: number,
  width: number,
  active: boolean,
  theme: Theme,
  g: Glyphs,
  now?: number,
): string {
  const item = entry.kind === "node" ? entry.node : entry.mount;
  const glyph = theme(NODE_TINTS[item.state], g.node[item.state]);
  const kind = entry.kind === "node" ? g.kind[entry.node.kind] : g.kind.include;
  const indent = "  ".repeat(entry.depth);
  const label =
    entry.kind === "node" ? nodeLabel(entry.node) : `${entry.mount.path} (${entry.mount.workflow})`;
  const tail = timingText(entry.kind === "node" ? entry.node : { ...entry.mount, errorCode: null }, now);
  const marker = active ? g.chosen : " ";
  let line = fitLine(`${marker}${glyph} ${kind} `, indent + label, theme("dim", tail), labelWidth, width, g.ellipsis);
  // What a running node reports comes last, and is what a narrow line cuts first.
  const detail =
    entry.kind === "node" ? runningDetail(view, entry.node, { now, glyphs: g, bar: WIDGET_BAR_CELLS }) : "";
  if (detail !== "" && visibleWidth(line) + 2 + MIN_DETAIL_COLUMNS <= width)
    line = clipToWidth(`${line}  ${theme("cyan", detail)}`, width, g.ellipsis);
  return active ? theme("bold", line) : line;
}

/** Which slice of `total` rows to show in `room` rows so that `focus` is inside, near the middle. */
function windowAround(total: number, room: number, focus: number): { start: number; end: number } {
  if (total <= room) return { start: 0, end: total };
  const start = Math.min(Math.max(0, focus - Math.floor((room - 1) / 2)), total - room);
  return { start, end: start + room };
}

/**
 * The Pi widget above the editor: one line per node (and per include) in flow order, windowed
 * around the active node when the run has more nodes than lines, and a parked run's reason last.
 */
export function renderWidgetLines(view: RunView, options: WidgetOptions): string[] {
  const width = Math.max(1, Math.floor(options.width));
  const maxLines = Math.max(1, Math.floor(options.maxLines ?? DEFAULT_WIDGET_LINES));
  const theme = options.theme ?? plainTheme;
  const g = options.glyphs ?? detectGlyphs();
  const entries = flowEntries(view);
  const active = activePath(view);
  const lines: string[] = [];

  const recovery =
    view.status === "parked" && view.recoveryReason !== null
      ? clipToWidth(
          theme("yellow", `${g.run.parked} parked: ${recoveryWords(view.recoveryReason)}`),
          width,
          g.ellipsis,
        )
      : undefined;
  const gate = gateLines(view, width, theme);
  const room = maxLines - (recovery === undefined ? 0 : 1) - gate.length;
  if (room > 0 && entries.length > 0) {
    const focus = Math.max(
      0,
      entries.findIndex((entry) => entryPath(entry) === active),
    );
    const { start, end } = windowAround(entries.length, room, focus);
    // A loop, not Math.max(...entries): a spread as long as the graph overflows the call stack.
    let labelWidth = 0;
    for (const entry of entries) {
      const label =
        entry.kind === "node" ? nodeLabel(entry.node) : `${entry.mount.path} (${entry.mount.workflow})`;
      labelWidth = Math.max(labelWidth, visibleWidth(label) + 2 * entry.depth);
    }
    // The first and last rows of a cut window say what is hidden, when there is room to spare.
    const marks = room >= 3;
    for (let i = start; i < end; i += 1) {
      const entry = entries[i] as FlowEntry;
      if (marks && i === start && start > 0) {
        lines.push(clipToWidth(theme("dim", `  ${g.more} ${start + 1} more above`), width, g.ellipsis));
      } else if (marks && i === end - 1 && end < entries.length) {
        lines.push(
          clipToWidth(theme("dim", `  ${g.more} ${entries.length - end + 1} more below`), width, g.ellipsis),
        );
      } else {
        lines.push(
          entryLine(view, entry, labelWidth, width, entryPath(entry) === active, theme, g, options.now),
        );
      }
    }
  }
  if (recovery !== undefined) lines.push(recovery);
  lines.push(...gate.slice(0, Math.max(0, maxLines - lines.length)));
  return lines;
}

/**
 * A waiting run's checkpoint: what it asks, who may answer, and a valid answer to type. The prompt
 * keeps to one line here; the viewer's inspector and `piw status` show all of it.
 */
function gateLines(view: RunView, width: number, theme: Theme): string[] {
  const checkpoint = view.checkpoint;
  if (view.outcome !== "waiting" || !checkpoint) return [];
  const prompt = checkpoint.prompt.replace(/\s+/g, " ").trim();
  const who = ANSWERED_BY_WORDS[checkpoint.answeredBy];
  const how =
    checkpoint.answeredBy === "model"
      ? "the model answers it with the workflow tool"
      : `/workflow answer ${view.runId} ${quotedExample(checkpoint)}`;
  return [
    clipToWidth(theme("yellow", `? ${checkpoint.path}: ${prompt}`), width, "…"),
    clipToWidth(theme("dim", `  answered by ${who}: ${how}`), width, "…"),
  ];
}

/**
 * The Pi footer: `wf <name> [<status word>] <current node path>`, and the running node's count and
 * estimate when it reports progress (`3/10 ~2 min left`).
 */
export function renderFooterStatus(view: RunView, now?: number): string {
  const path = activePath(view);
  const head = `wf ${view.workflowName} [${runStateWord(view)}]`;
  if (path === null) return head;
  const node = view.nodes.find((n) => n.path === path);
  const progress = node === undefined ? undefined : nodeProgressOf(view, node);
  const words =
    progress === undefined
      ? ""
      : progressWords(progress, { now, glyphs: UNICODE_GLYPHS, compact: true, noMessage: true });
  return words === "" ? `${head} ${path}` : `${head} ${path} ${words}`;
}
