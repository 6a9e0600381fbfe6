import { visibleWidth } from "@earendil-works/pi-tui";
import type { RunStatus, RunSummary } from "@piw/protocol";
import { formatAge, formatDuration } from "./format.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { RUN_GLYPHS, RUN_TINTS, runStateWord } from "./words.js";

/** The run list's status filters, in the order `tab` cycles through them. */
export const RUN_FILTERS = ["all", "active", "parked", "done", "failed", "cancelled"] as const;
export type RunFilter = (typeof RUN_FILTERS)[number];

const FILTER_STATUSES: Record<Exclude<RunFilter, "all">, readonly RunStatus[]> = {
  active: ["queued", "starting", "running"],
  parked: ["parked"],
  done: ["done"],
  failed: ["failed"],
  cancelled: ["cancelled"],
};

export function filterRuns(runs: readonly RunSummary[], filter: RunFilter): RunSummary[] {
  if (filter === "all") return [...runs];
  const statuses = FILTER_STATUSES[filter];
  return runs.filter((run) => statuses.includes(run.status));
}

export interface RunTableOptions {
  width: number;
  /** Index into `runs` of the highlighted row. */
  selected?: number;
  now: number;
  theme?: Theme;
}

function origin(run: RunSummary): string {
  return run.origin.kind === "pi" ? `pi ${run.origin.sessionId.slice(0, 8)}` : "cli";
}

/**
 * The run list: status, workflow, started, duration, origin, and for a parked run why. The header
 * is the first line; each run is one line after it.
 */
export function renderRunTable(runs: readonly RunSummary[], options: RunTableOptions): string[] {
  const theme = options.theme ?? plainTheme;
  const width = Math.max(1, options.width);
  const rows = runs.map((run) => {
    const word = runStateWord(run);
    return {
      word,
      cells: [
        `${RUN_GLYPHS[word]} ${word}`,
        run.workflowName,
        run.startedAt === null
          ? formatAge(run.createdAt, options.now)
          : formatAge(run.startedAt, options.now),
        run.startedAt === null ? "-" : formatDuration((run.finishedAt ?? options.now) - run.startedAt),
        origin(run),
        run.status === "parked" && run.recoveryReason !== null
          ? `${run.recoveryReason.code}: ${run.recoveryReason.message}`
          : run.runId,
      ],
    };
  });
  const header = ["STATUS", "WORKFLOW", "STARTED", "DURATION", "ORIGIN", "RUN / REASON"];
  const widths = header.map((title, i) =>
    Math.max(visibleWidth(title), ...rows.map((row) => visibleWidth(row.cells[i] ?? ""))),
  );
  widths[1] = Math.min(widths[1] ?? 0, 28);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1) return cell;
        const w = widths[i] ?? 0;
        const fitted = clipToWidth(cell, w, "…");
        return fitted + " ".repeat(Math.max(0, w - visibleWidth(fitted)));
      })
      .join("  ");
  const lines = [theme("dim", clipToWidth(`  ${line(header)}`, width, "…"))];
  rows.forEach((row, i) => {
    const chosen = i === options.selected;
    const text = clipToWidth(`${chosen ? "›" : " "} ${line(row.cells)}`, width, "…");
    lines.push(chosen ? theme("inverse", text) : theme(RUN_TINTS[row.word], text));
  });
  return lines;
}
