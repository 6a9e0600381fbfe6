import {
  clockDueAt,
  isClockReason,
  isLaterVisit,
  type NodeView,
  type RecoveryReason,
  type RunSummary,
  type RunView,
  type VisitMark,
} from "@piw/protocol";
import {
  ANSWERED_BY_WORDS,
  flowEntries,
  formatAge,
  formatDueTime,
  formatDuration,
  formatTimeLeft,
  joinWords,
  quotedExample,
  budgetWords,
  recoveryWords,
  runningDetail,
  runProgressWords,
  UNICODE_GLYPHS,
} from "@piw/viewer";
import {
  NODE_STATE_WORDS,
  nodeGlyph,
  type RunStateWord,
  runGlyph,
  runStateLabel,
  runStateText,
  runStateWord,
} from "./render-words.js";
import { renderValueLines } from "./render-value.js";
import type { Style } from "./style.js";

export { formatAge, formatDuration } from "@piw/viewer";

function runDuration(run: RunSummary, now: number): string | undefined {
  if (run.startedAt === null) return undefined;
  return formatDuration((run.finishedAt ?? now) - run.startedAt);
}

interface NodeColumns {
  path: number;
  kind: number;
}

function nodeColumns(view: RunView): NodeColumns {
  let path = 4;
  let kind = 4;
  for (const node of view.nodes) {
    path = Math.max(path, node.path.length);
    kind = Math.max(kind, node.kind.length);
  }
  return { path, kind };
}

/** `✓ greet  compute  #1  3ms`: glyph, full path, kind, visit (and attempt), duration or error. */
function renderNodeLine(node: NodeView, columns: NodeColumns, style: Style, now: number | undefined): string {
  const parts = [
    `${nodeGlyph(node.state, style)} ${node.path.padEnd(columns.path)}`,
    node.kind.padEnd(columns.kind),
  ];
  if (node.visits === 0) {
    parts.push(style.dim(NODE_STATE_WORDS[node.state]));
    return parts.join("  ").trimEnd();
  }
  parts.push(node.attempt > 1 ? `#${node.visits} (attempt ${node.attempt})` : `#${node.visits}`);
  if (node.state === "running") {
    // Elapsed time only for a snapshot (`now` given); a live line would be stale at once.
    const elapsed =
      now === undefined || node.startedAt === null ? "" : ` ${formatDuration(now - node.startedAt)}`;
    parts.push(style.dim(`running${elapsed}`));
    if (now !== undefined && node.deadlineAt) parts.push(style.dim(formatTimeLeft(node.deadlineAt, now)));
  } else {
    if (node.startedAt !== null && node.finishedAt !== null) {
      parts.push(formatDuration(node.finishedAt - node.startedAt));
    }
    if (node.state !== "succeeded") {
      const word = NODE_STATE_WORDS[node.state];
      const paint = node.state === "cancelled" || node.state === "paused" ? style.yellow : style.red;
      parts.push(paint(node.errorCode === null ? word : `${word}: ${node.errorCode}`));
    }
  }
  return parts.join("  ");
}

/** When a node's shown change happened: its finish, else its start; a node with neither sorts last. */
function changedAt(node: NodeView): number {
  return node.finishedAt ?? node.startedAt ?? Number.POSITIVE_INFINITY;
}

const ENDED_STATES: ReadonlySet<NodeView["state"]> = new Set(["succeeded", "failed", "timed_out"]);

/**
 * Turns a stream of views into one line per node change, for `piw run` and the other following
 * commands. A node is printed when its state, visit or attempt changes; pending nodes are skipped.
 * Every visit's end is printed once, also one a later visit replaced before a view showed it (the
 * view's `passed`). The changes one view carries print in the order they happened (a parallel node's
 * branches finish before its join, though the graph lists them after it); ties keep the graph's order.
 */
export class NodeChangeTracker {
  private readonly printed = new Map<string, string>();
  /** Per path, the latest visit whose end was printed. */
  private readonly ended = new Map<string, VisitMark>();

  constructor(private readonly style: Style) {}

  changes(view: RunView): string[] {
    const columns = nodeColumns(view);
    const changed: NodeView[] = [];
    const kinds = new Map(view.nodes.map((node) => [node.path, node.kind]));
    for (const visit of view.passed ?? []) {
      if (!isLaterVisit(visit, this.ended.get(visit.path))) continue;
      this.ended.set(visit.path, visit);
      const kind = kinds.get(visit.path) ?? "compute";
      changed.push({ ...visit, kind, title: visit.path, visits: visit.visit });
    }
    for (const node of view.nodes) {
      if (node.state === "pending") continue;
      const key = `${node.state}:${node.visits}:${node.attempt}`;
      if (this.printed.get(node.path) === key) continue;
      this.printed.set(node.path, key);
      const mark = { visit: node.visits, attempt: node.attempt };
      if (ENDED_STATES.has(node.state)) {
        // Printed already as a passed visit of an earlier view's (a view may lag behind another's).
        if (!isLaterVisit(mark, this.ended.get(node.path))) continue;
        this.ended.set(node.path, mark);
      }
      changed.push(node);
    }
    const lines = changed
      .sort((a, b) => changedAt(a) - changedAt(b))
      .map((node) => `  ${renderNodeLine(node, columns, this.style, undefined)}`);
    const omitted = view.passedOmitted;
    return omitted === undefined
      ? lines
      : [
          `  ${this.style.dim(`… ${omitted} earlier node ${omitted === 1 ? "visit" : "visits"} not shown`)}`,
          ...lines,
        ];
  }
}

export function describeRecovery(reason: RecoveryReason): string {
  return recoveryWords(reason);
}

/** The line `piw run` starts a run's lines with: the workflow, its title, the run ID. */
export function runTitleLine(
  style: Style,
  launch: { workflowName: string; title?: string | undefined },
  runId: string,
): string {
  const title = launch.title === undefined ? "" : ` (${launch.title})`;
  return `${style.bold(launch.workflowName)}${title}  ${style.dim(`run ${runId}`)}`;
}

/** Where a followed run stops being followed, and with which state word. */
export function settledWord(view: RunSummary): RunStateWord | undefined {
  switch (view.status) {
    case "done":
    case "failed":
    case "cancelled":
      return runStateWord(view);
    case "parked":
      // The host relaunches a worker that died after saving progress: keep following.
      // Nor does a run parked on the clock stop being followed: the host wakes it at its time.
      return view.recoveryReason?.code === "worker_lost" || isClockReason(view.recoveryReason)
        ? undefined
        : "parked";
    case "queued":
    case "starting":
    case "running":
      return undefined;
    default:
      return view.status satisfies never;
  }
}

/** The closing lines of a followed run: what happened and, when it stopped short, what to do next. */
export function renderFinalLines(view: RunView, style: Style, now: number = Date.now()): string[] {
  const word = runStateWord(view);
  const took = runDuration(view, now);
  const head = `${runGlyph(word, style)} ${style.bold(view.workflowName)} ${word}`;
  switch (word) {
    case "completed":
      return [
        `${head}${took === undefined ? "" : ` in ${took}`}  ${style.dim(view.runId)}`,
        ...outputLines(view, style),
      ];
    case "cancelled":
      return [`${head}${took === undefined ? "" : ` in ${took}`}  ${style.dim(view.runId)}`];
    case "waiting": {
      const at = view.cursor === null ? "" : ` at ${view.cursor.path}`;
      return [`${head}${at}  ${style.dim(view.runId)}`, answerHint(view)];
    }
    case "failed":
    case "timed out": {
      const why = view.error === null ? "" : `: ${view.error.code}: ${view.error.message}`;
      return [`${head}${why}  ${style.dim(view.runId)}`];
    }
    case "parked": {
      const why = view.recoveryReason === null ? "" : `: ${describeRecovery(view.recoveryReason)}`;
      const due = view.paused ? null : clockDueAt(view.recoveryReason);
      // A run on the clock goes on by itself: say when, not how to resume it.
      const hint =
        due === null
          ? `resume it with: piw resume ${view.runId}   or cancel it with: piw cancel ${view.runId}`
          : `it goes on by itself at ${formatDueTime(due)}   or cancel it with: piw cancel ${view.runId}`;
      return [`${head}${why}  ${style.dim(view.runId)}`, hint];
    }
    case "queued":
    case "starting":
    case "running":
      return [`${head}  ${style.dim(view.runId)}`];
    default:
      return word satisfies never;
  }
}

function originText(origin: RunSummary["origin"]): string {
  switch (origin.kind) {
    case "pi":
      return `Pi session ${origin.sessionId}`;
    case "cli":
      return "cli";
    case "schedule":
      return `schedule ${origin.scheduleId}, fired for ${new Date(origin.scheduledFor).toISOString()}`;
    default:
      return origin satisfies never;
  }
}

function describeOrigin(view: RunSummary): string {
  const where = originText(view.origin);
  switch (view.originCommand) {
    case "start":
      return where;
    case "continue":
      return `${where}, continuation of ${view.parentRunId ?? "?"}`;
    case "restart":
      return `${where}, restart ${view.restartNumber} of ${view.parentRunId ?? "?"}`;
    default:
      return view.originCommand satisfies never;
  }
}

function describeWork(view: RunView): string | undefined {
  const work = view.currentWork;
  switch (work.kind) {
    case "none":
      return undefined;
    case "worker":
      return `worker ${work.launchId}${work.path === null ? "" : ` at ${work.path}`}`;
    case "turn":
      return `Pi turn ${work.turnId}${work.path === null ? "" : ` at ${work.path}`}`;
    case "waiting_for_model":
      return `waiting for the model at ${work.path}`;
    case "waiting_for_worker":
      return `waiting for a free worker: number ${work.position} in line (the host runs at most ${work.cap})`;
    default:
      return work satisfies never;
  }
}

/** Columns of a running step's progress bar in `piw status`. */
const STATUS_BAR_CELLS = 10;

/** `piw status`: the run's facts as labelled lines, then every node. */
export function renderRunStatus(view: RunView, style: Style, now: number = Date.now()): string[] {
  const rows: [string, string][] = [
    ["run", view.runId],
    ["workflow", view.title === null ? view.workflowName : `${view.workflowName} (${view.title})`],
    [
      "status",
      `${runStateLabel(runStateWord(view), style, runStateText(view))}${view.paused ? " (paused)" : ""}`,
    ],
    ["origin", describeOrigin(view)],
    ["created", formatAge(view.createdAt, now)],
  ];
  const took = runDuration(view, now);
  if (took !== undefined) rows.push(["duration", took]);
  const work = describeWork(view);
  if (work !== undefined) rows.push(["current", work]);
  if (view.cursor !== null) rows.push(["at", `${view.cursor.path} #${view.cursor.visit}`]);
  for (const ws of view.workspaces ?? [])
    rows.push(["workspace", `${ws.path} (${ws.mode}, branch ${ws.branch})`]);
  const spent = budgetWords(view);
  if (spent !== "") rows.push(["budget", spent.replace(/^budget /, "")]);
  const overall = runProgressWords(view, { now, glyphs: UNICODE_GLYPHS, bar: STATUS_BAR_CELLS });
  if (overall !== "") rows.push(["progress", overall]);
  if (view.recoveryReason !== null)
    rows.push(["recovery", style.yellow(describeRecovery(view.recoveryReason))]);
  if (view.error !== null) rows.push(["error", style.red(`${view.error.code}: ${view.error.message}`)]);
  const lines = rows.map(([label, value]) => `${label.padEnd(9)} ${value}`);
  if (view.input !== undefined) lines.push(...renderValueLines("input", view.input, view.runId, style));
  lines.push(...outputLines(view, style));
  lines.push(...checkpointLines(view, style));
  lines.push(`nodes`);
  const forks = new Map((view.manifest.forks ?? []).map((fork) => [fork.path, fork]));
  if (forks.size === 0) {
    const columns = nodeColumns(view);
    for (const node of view.nodes) lines.push(...nodeLines(view, node, 0, columns, style, now));
    return lines;
  }
  // With parallel nodes, in flow order: each branch's nodes indented under its name, under the fork.
  const entries = flowEntries(view);
  const columns = nodeColumns(view);
  // A branch's name sits one step in from its fork; its nodes one step in from their branch's name.
  const depthOf = (entry: (typeof entries)[number]) =>
    entry.kind === "branch" || (entry.kind === "node" && entry.branch !== undefined)
      ? entry.depth + 1
      : entry.depth;
  for (const entry of entries)
    if (entry.kind === "node")
      columns.path = Math.max(columns.path, entry.node.path.length + 2 * depthOf(entry));
  for (const entry of entries) {
    const indent = "  ".repeat(depthOf(entry));
    if (entry.kind === "branch") {
      const { branch } = entry;
      lines.push(
        `  ${indent}${style.dim("branch")} ${branch.label}  ${nodeGlyph(branch.state, style)} ${NODE_STATE_WORDS[branch.state]}`,
      );
    } else if (entry.kind === "node") {
      const fork = forks.get(entry.node.path);
      const shifted = { ...columns, path: columns.path - 2 * depthOf(entry) };
      const [first = "", ...rest] = nodeLines(view, entry.node, depthOf(entry), shifted, style, now);
      lines.push(fork === undefined ? first : `${first}  ${style.dim(joinWords(fork))}`, ...rest);
    }
  }
  return lines;
}

/** A node's status line, then its reported progress and its agent's latest tool call under it. */
function nodeLines(
  view: RunView,
  node: NodeView,
  depth: number,
  columns: NodeColumns,
  style: Style,
  now: number,
): string[] {
  const indent = "  ".repeat(depth);
  const lines = [`  ${indent}${renderNodeLine(node, columns, style, now)}`];
  const detail = runningDetail(view, node, { now, glyphs: UNICODE_GLYPHS, bar: STATUS_BAR_CELLS });
  if (detail !== "") lines.push(`  ${indent}${" ".repeat(columns.path + 4)}${style.cyan(detail)}`);
  return lines;
}

/** A completed run's final output, pretty and folded when long. */
function outputLines(view: RunView, style: Style): string[] {
  if (view.output === undefined || view.output === null) return [];
  return renderValueLines("output", view.output, view.runId, style);
}

/** How to answer a waiting run, with an answer that fits the checkpoint's schema. */
function answerHint(view: RunView): string {
  const checkpoint = view.checkpoint;
  if (checkpoint?.answeredBy === "model") {
    return `the model answers it with the workflow tool (answer: ${quotedExample(checkpoint)})`;
  }
  return `answer it with: piw answer ${view.runId} ${checkpoint ? quotedExample(checkpoint) : "'<json>'"}`;
}

/** A waiting run's checkpoint: what it asks, who may answer, and the answer's JSON Schema. */
function checkpointLines(view: RunView, style: Style): string[] {
  const checkpoint = view.checkpoint;
  // An answered checkpoint waits no more: the status line names the continuation.
  if (view.outcome !== "waiting" || !checkpoint || view.continuedAs) return [];
  const lines = [
    `${"asks".padEnd(9)} ${checkpoint.prompt.split("\n").join(`\n${" ".repeat(10)}`)}`,
    `${"answers".padEnd(9)} ${ANSWERED_BY_WORDS[checkpoint.answeredBy]}`,
  ];
  if (checkpoint.answerSchema !== null) {
    lines.push(`${"schema".padEnd(9)} ${style.dim(JSON.stringify(checkpoint.answerSchema))}`);
  }
  if (checkpoint.deadline) {
    const { at, answer } = checkpoint.deadline;
    lines.push(
      `${"deadline".padEnd(9)} ${new Date(at).toISOString()}; unanswered by then, ${JSON.stringify(answer)} is taken automatically`,
    );
  }
  lines.push(answerHint(view));
  return lines;
}
