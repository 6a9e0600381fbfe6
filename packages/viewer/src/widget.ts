import { budgetWords } from "./budget-words.js";
import { visibleWidth } from "@earendil-works/pi-tui";
import type { NodeView, RunView } from "@piw/protocol";
import { ANSWERED_BY_WORDS, quotedExample } from "./answer-example.js";
import { activePath } from "./flow.js";
import { type BranchView, branchIndex, branchView, forkBranches, localPath } from "./forks.js";
import { formatDuration, formatTimeLeft } from "./format.js";
import { detectGlyphs, type Glyphs, UNICODE_GLYPHS } from "./glyphs.js";
import { nodeProgressOf, progressWords, runningDetail, runProgressWords } from "./progress-words.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { branchFace, moreWords, rowHolds, type WidgetRow, widgetRows } from "./widget-rows.js";
import { NODE_STATE_WORDS, NODE_TINTS, type NodeState, runStateWord } from "./words.js";
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

function rowLabel(row: WidgetRow, g: Glyphs): string {
  switch (row.kind) {
    case "node":
      return nodeLabel(row.node);
    case "mount":
      return `${row.mount.path} (${row.mount.workflow})`;
    case "branch": {
      const face = row.branch.running[0];
      return face === undefined
        ? row.branch.label
        : `${row.branch.label} ${g.chosen} ${branchLocal(row.branch, face)}`;
    }
    case "more":
      return moreWords(row);
    default:
      return row satisfies never;
  }
}

function branchLocal(branch: BranchView, node: NodeView): string {
  return node.path.slice(`${branch.forkPath}/${branch.name}/`.length);
}

/** A branch's tail: its running node's timing, or what became of it and how long it took. */
function branchTail(branch: BranchView, now?: number): string {
  const face = branchFace(branch);
  if (branch.state === "running" && face !== undefined) return timingText(face, now);
  if (branch.state === "pending" || face === undefined) return "";
  let startedAt: number | null = null;
  let finishedAt: number | null = null;
  for (const node of branch.nodes) {
    if (node.startedAt !== null) startedAt = Math.min(startedAt ?? node.startedAt, node.startedAt);
    if (node.finishedAt !== null) finishedAt = Math.max(finishedAt ?? node.finishedAt, node.finishedAt);
  }
  const parts: string[] = [NODE_STATE_WORDS[branch.state]];
  if (startedAt !== null && finishedAt !== null) parts.push(formatDuration(finishedAt - startedAt));
  if (branch.state !== "succeeded" && face.errorCode) parts.push(face.errorCode);
  return parts.join("  ");
}

function rowLine(
  view: RunView,
  row: WidgetRow,
  labelWidth: number,
  width: number,
  active: boolean,
  theme: Theme,
  g: Glyphs,
  now?: number,
): string {
  const marker = active ? g.chosen : " ";
  if (row.kind === "more") {
    const line = clipToWidth(
      `${marker}  ${g.tree.last} ${"  ".repeat(row.depth)}${moreWords(row)}`,
      width,
      g.ellipsis,
    );
    return theme("dim", line);
  }
  const item = row.kind === "node" ? row.node : row.kind === "mount" ? row.mount : row.branch;
  const glyph = theme(NODE_TINTS[item.state], g.node[item.state]);
  let kind: string;
  let tail: string;
  let face: NodeView | undefined;
  switch (row.kind) {
    case "node":
      kind = g.kind[row.node.kind];
      tail = timingText(row.node, now);
      face = row.node;
      break;
    case "mount":
      kind = g.kind.include;
      tail = timingText({ ...row.mount, errorCode: null }, now);
      break;
    case "branch":
      kind = row.last ? g.tree.last : g.tree.mid;
      tail = branchTail(row.branch, now);
      face = row.branch.running[0];
      break;
    default:
      return row satisfies never;
  }
  const indent = "  ".repeat(row.depth);
  let line = fitLine(
    `${marker}${glyph} ${kind} `,
    indent + rowLabel(row, g),
    theme("dim", tail),
    labelWidth,
    width,
    g.ellipsis,
  );
  // What a running node reports comes last, and is what a narrow line cuts first.
  const detail =
    face === undefined ? "" : runningDetail(view, face, { now, glyphs: g, bar: WIDGET_BAR_CELLS });
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
  const rows = widgetRows(view);
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
  const overall = runProgressWords(view, { now: options.now, glyphs: g, bar: WIDGET_BAR_CELLS });
  const runLine =
    overall === "" ? undefined : clipToWidth(theme("cyan", `${g.dot} run ${overall}`), width, g.ellipsis);
  // Spend against budget while the run can still spend; a parked run's reason says it already.
  const spent = budgetWords(view);
  const budget =
    spent !== "" && (view.status === "running" || view.status === "starting")
      ? clipToWidth(theme("dim", spent), width, g.ellipsis)
      : undefined;
  const room =
    maxLines -
    (recovery === undefined ? 0 : 1) -
    (budget === undefined ? 0 : 1) -
    (runLine === undefined ? 0 : 1) -
    gate.length;
  if (room > 0 && rows.length > 0) {
    const focus = Math.max(
      0,
      rows.findIndex((row) => rowHolds(row, active)),
    );
    const { start, end } = windowAround(rows.length, room, focus);
    // A loop, not Math.max(...rows): a spread as long as the graph overflows the call stack.
    let labelWidth = 0;
    for (const row of rows)
      if (row.kind !== "more")
        labelWidth = Math.max(labelWidth, visibleWidth(rowLabel(row, g)) + 2 * row.depth);
    // The first and last rows of a cut window say what is hidden, when there is room to spare.
    const marks = room >= 3;
    for (let i = start; i < end; i += 1) {
      const row = rows[i] as WidgetRow;
      if (marks && i === start && start > 0) {
        lines.push(clipToWidth(theme("dim", `  ${g.more} ${start + 1} more above`), width, g.ellipsis));
      } else if (marks && i === end - 1 && end < rows.length) {
        lines.push(
          clipToWidth(theme("dim", `  ${g.more} ${rows.length - end + 1} more below`), width, g.ellipsis),
        );
      } else {
        lines.push(
          rowLine(view, row, labelWidth, width, i === focus && rowHolds(row, active), theme, g, options.now),
        );
      }
    }
  }
  if (budget !== undefined && lines.length < maxLines) lines.push(budget);
  if (runLine !== undefined && lines.length < maxLines) lines.push(runLine);
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
 * estimate when it reports progress (`3/10 · ~2 min left`). At a parallel node it names the branch
 * running (`review › test › integration`), or how many run (`review: 2 of 3 branches running`).
 */
export function renderFooterStatus(view: RunView, now?: number): string {
  let path = activePath(view);
  const spent = budgetWords(view);
  const head = `wf ${view.workflowName} [${runStateWord(view)}]${spent === "" ? "" : ` ${spent}`}`;
  const overall = runProgressWords(view, { now, glyphs: UNICODE_GLYPHS, compact: true, noMessage: true });
  if (path === null) return overall === "" ? head : `${head} ${overall}`;
  let where = path;
  const fork = view.manifest.forks?.find((f) => f.path === path);
  if (fork !== undefined && view.nodes.some((n) => n.path === fork.path && n.state === "running")) {
    const branches = forkBranches(fork).map((ref) => branchView(ref, view));
    const running = branches.filter((branch) => branch.state === "running");
    const face = running.length === 1 ? running[0]?.running[0] : undefined;
    if (running.length === 1 && face !== undefined) {
      path = face.path;
      where = `${fork.path} › ${running[0]?.label} › ${localPath(face.path, branchIndex(view.manifest))}`;
    } else where = `${fork.path}: ${running.length} of ${branches.length} branches running`;
  }
  const node = view.nodes.find((n) => n.path === path);
  const progress = node === undefined ? undefined : nodeProgressOf(view, node);
  const words =
    progress === undefined
      ? ""
      : progressWords(progress, { now, glyphs: UNICODE_GLYPHS, compact: true, noMessage: true });
  // A step's own progress is the closer news; without one, the run's stands in.
  const shown = words === "" ? overall : words;
  return shown === "" ? `${head} ${where}` : `${head} ${where} ${shown}`;
}
