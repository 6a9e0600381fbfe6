import type { ClientResult, RunSummary } from "@piw/protocol";
import { runProgressWords, UNICODE_GLYPHS } from "@piw/viewer";
import { formatAge, formatDuration } from "./render-run.js";
import { runStateLabel, runStateText, runStateWord } from "./render-words.js";
import type { Style } from "./style.js";

/** Pads a cell by its visible width, so colour codes do not skew the columns. */
function pad(cell: string, width: number, visible: number): string {
  return cell + " ".repeat(Math.max(0, width - visible));
}

export function table(header: string[], rows: { text: string; width: number }[][], style: Style): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.width ?? 0)));
  const line = (cells: { text: string; width: number }[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell.text : pad(cell.text, widths[i] ?? 0, cell.width)))
      .join("  ");
  return [style.dim(line(header.map((title) => ({ text: title, width: title.length })))), ...rows.map(line)];
}

export const plain = (text: string) => ({ text, width: text.length });

/** `piw list`: one row per run, newest as the host orders them. */
export function renderRunList(runs: readonly RunSummary[], style: Style, now: number = Date.now()): string[] {
  if (runs.length === 0) return ["no runs"];
  const rows = runs.map((run) => {
    const word = runStateWord(run);
    const text = runStateText(run);
    const took = run.startedAt === null ? "-" : formatDuration((run.finishedAt ?? now) - run.startedAt);
    // A run's own progress follows its state: `parked 3/100 · by 20:20` (a printed line names the time).
    const overall = runProgressWords(run, { glyphs: UNICODE_GLYPHS, compact: true, noMessage: true });
    const extra = overall === "" ? "" : ` ${overall}`;
    return [
      plain(run.runId),
      plain(run.workflowName),
      { text: `${runStateLabel(word, style, text)}${extra}`, width: text.length + 2 + extra.length },
      plain(formatAge(run.createdAt, now)),
      plain(took),
      plain(run.inputSummary ?? ""),
    ];
  });
  return table(["RUN", "WORKFLOW", "STATUS", "CREATED", "DURATION", "INPUT"], rows, style);
}

export type HostStatus = ClientResult<"host.status">;

/** `piw host status`. */
export function renderHostStatus(status: HostStatus, style: Style, now: number = Date.now()): string[] {
  const counts = Object.entries(status.runs)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${state} ${count}`);
  const lines = [
    `host      ${style.green("running")} (pid ${status.pid}, version ${status.version})`,
    `state     ${status.stateDir}`,
    `up        ${formatDuration(now - status.startedAt)}`,
    `sync      ${status.synchronous}`,
    `runs      ${counts.length === 0 ? "none" : counts.join(", ")}`,
    `workers   ${status.workers.length === 0 ? "none" : String(status.workers.length)}`,
  ];
  for (const worker of status.workers) {
    lines.push(
      `  ${worker.runId}  launch ${worker.launchId}${worker.pid === null ? "" : `  pid ${worker.pid}`}`,
    );
  }
  return lines;
}
