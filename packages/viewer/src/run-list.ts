import { visibleWidth } from "@earendil-works/pi-tui";
import { ACTIVE_STATUSES, isClockReason, type RunStatus, type RunSummary } from "@piw/protocol";
import { formatAge, formatDuration } from "./format.js";
import { filledBar } from "./bar.js";
import { detectGlyphs, type Glyphs } from "./glyphs.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { RUN_TINTS, runStateText, runStateWord } from "./words.js";
import { clockWords } from "./clock-words.js";
import { runProgressWords } from "./progress-words.js";

/** The run list's status filters, in the order `tab` cycles through them. */
export const RUN_FILTERS = ["all", "active", "parked", "done", "failed", "cancelled"] as const;
export type RunFilter = (typeof RUN_FILTERS)[number];

const FILTER_STATUSES: Record<Exclude<RunFilter, "all">, readonly RunStatus[]> = {
  active: ACTIVE_STATUSES,
  parked: ["parked"],
  done: ["done"],
  failed: ["failed"],
  cancelled: ["cancelled"],
};

/** The runs the list shows: those in the filter's states, and only one schedule's when it names one. */
export function filterRuns(
  runs: readonly RunSummary[],
  filter: RunFilter,
  scheduleId: string | null = null,
): RunSummary[] {
  const ofSchedule =
    scheduleId === null
      ? runs
      : runs.filter((run) => run.origin.kind === "schedule" && run.origin.scheduleId === scheduleId);
  if (filter === "all") return [...ofSchedule];
  const statuses = FILTER_STATUSES[filter];
  return ofSchedule.filter((run) => statuses.includes(run.status));
}

export interface RunTableOptions {
  width: number;
  /** Index into `runs` of the highlighted row. */
  selected?: number;
  now: number;
  theme?: Theme;
  glyphs?: Glyphs;
}

/** The input column's widest and narrowest: narrower than that, the column is dropped first. */
const INPUT_COLUMN_MAX = 40;
const INPUT_COLUMN_MIN = 12;
const INPUT_COLUMN = 6;

/** Columns of the duration bar: the longest run listed fills it. */
const DURATION_BAR_WIDTH = 10;

/** A bar `ms / longest` of `width` columns long, in eighths where the glyphs allow. */
function durationBar(ms: number, longest: number, width: number, g: Glyphs): string {
  if (longest <= 0 || ms <= 0) return "";
  // At least one eighth: a run that took any time shows some bar.
  const bar = filledBar(Math.max(1 / (width * 8), Math.min(ms, longest) / longest), width, g);
  return bar === "" ? g.bar.full : bar;
}

function tookMs(run: RunSummary, now: number): number | null {
  return run.startedAt === null ? null : (run.finishedAt ?? now) - run.startedAt;
}

function origin(run: RunSummary): string {
  switch (run.origin.kind) {
    case "pi":
      return `pi ${run.origin.sessionId.slice(0, 8)}`;
    case "cli":
      return "cli";
    case "schedule":
      return `schedule ${run.origin.scheduleId}`;
    default:
      return run.origin satisfies never;
  }
}

/** A run waiting on the clock with its run-wide progress: `waiting until … · 3/100 · 2 h left`. */
function withRunProgress(words: string, run: RunSummary, now: number, g: Glyphs): string {
  const overall = runProgressWords(run, { now, glyphs: g, compact: true, noMessage: true });
  return overall === "" ? words : `${words} ${g.dot} ${overall}`;
}

/**
 * The run list: status, workflow, started, duration with a bar against the longest run listed,
 * origin, the input where the width leaves room for it, and for a parked run why. The header is the first line; each run is one line after it.
 */
export function renderRunTable(runs: readonly RunSummary[], options: RunTableOptions): string[] {
  const theme = options.theme ?? plainTheme;
  const g = options.glyphs ?? detectGlyphs();
  const width = Math.max(1, options.width);
  let longest = 0;
  for (const run of runs) longest = Math.max(longest, tookMs(run, options.now) ?? 0);
  const rows = runs.map((run) => {
    const word = runStateWord(run);
    const took = tookMs(run, options.now);
    return {
      word,
      cells: [
        `${g.run[word]} ${runStateText(run)}`,
        run.workflowName,
        run.startedAt === null
          ? formatAge(run.createdAt, options.now)
          : formatAge(run.startedAt, options.now),
        took === null ? "-" : formatDuration(took),
        took === null ? "" : durationBar(took, longest, DURATION_BAR_WIDTH, g),
        origin(run),
        run.inputSummary ?? "",
        run.status === "parked" && run.recoveryReason !== null
          ? isClockReason(run.recoveryReason)
            ? withRunProgress(clockWords(run.recoveryReason), run, options.now, g)
            : `${run.recoveryReason.code}: ${run.recoveryReason.message}`
          : run.runId,
      ],
    };
  });
  const header = ["STATUS", "WORKFLOW", "STARTED", "DURATION", "", "ORIGIN", "INPUT", "RUN / REASON"];
  const widths = header.map((title, i) =>
    Math.max(visibleWidth(title), ...rows.map((row) => visibleWidth(row.cells[i] ?? ""))),
  );
  widths[1] = Math.min(widths[1] ?? 0, 28);
  widths[4] = DURATION_BAR_WIDTH;
  // The input takes what the other columns leave, up to its widest; with too little left it goes.
  const others = widths.reduce((sum, w, i) => (i === INPUT_COLUMN ? sum : sum + w + 2), 2) - 2;
  const room = Math.min(widths[INPUT_COLUMN] ?? 0, INPUT_COLUMN_MAX, width - others - 2);
  const hasInput = rows.some((row) => row.cells[INPUT_COLUMN] !== "");
  if (hasInput && room >= INPUT_COLUMN_MIN) widths[INPUT_COLUMN] = room;
  else {
    for (const cells of [header, ...rows.map((row) => row.cells)]) cells.splice(INPUT_COLUMN, 1);
    widths.splice(INPUT_COLUMN, 1);
  }
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1) return cell;
        const w = widths[i] ?? 0;
        const fitted = clipToWidth(cell, w, g.ellipsis);
        return fitted + " ".repeat(Math.max(0, w - visibleWidth(fitted)));
      })
      .join("  ");
  const lines = [theme("dim", clipToWidth(`  ${line(header)}`, width, g.ellipsis))];
  rows.forEach((row, i) => {
    const chosen = i === options.selected;
    const text = clipToWidth(`${chosen ? g.chosen : " "} ${line(row.cells)}`, width, g.ellipsis);
    lines.push(chosen ? theme("inverse", text) : theme(RUN_TINTS[row.word], text));
  });
  return lines;
}
