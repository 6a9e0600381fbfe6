import { isTerminalStatus, type RunView } from "@piw/protocol";
import { formatDuration } from "./format.js";
import type { Glyphs } from "./glyphs.js";
import { describeEvent } from "./replay.js";
import type { Theme } from "./theme.js";
import type { OpenRun } from "./viewer-state.js";
import { RUN_TINTS, runStateText, runStateWord } from "./words.js";
import { budgetWords } from "./budget-words.js";
import { recoveryWords } from "./clock-words.js";
import { runProgressWords } from "./progress-words.js";

/** Whether the run can still change: a finished run is not live, whatever the connection says. */
function isRunLive(view: RunView): boolean {
  return !isTerminalStatus(view.status);
}

/** Whether some node is running, so its elapsed time moves between pushes. */
export function hasRunningWork(view: RunView): boolean {
  return (
    view.status === "running" || view.status === "starting" || view.nodes.some((n) => n.state === "running")
  );
}

/** `piw · workflow (title) · runId · ✗ failed · 1.2s · step_failed: what went wrong`. */
export function runHeader(view: RunView, now: number, theme: Theme, g: Glyphs): string {
  const word = runStateWord(view);
  const took =
    view.startedAt === null ? "" : ` ${g.dot} ${formatDuration((view.finishedAt ?? now) - view.startedAt)}`;
  const title = view.title === null ? view.workflowName : `${view.workflowName} (${view.title})`;
  // A run that ended badly says why in its first line: the error is bounded and safe to show.
  const error =
    view.error !== null && word !== "completed" && word !== "waiting"
      ? ` ${g.dot} ${theme("red", `${view.error.code}: ${view.error.message}`)}`
      : "";
  const state = theme(RUN_TINTS[word], `${g.run[word]} ${runStateText(view)}`);
  const spent = budgetWords(view);
  const budget = spent === "" ? "" : ` ${g.dot} ${theme("dim", spent)}`;
  // The run's own progress and when it ends at the latest, parked between steps too.
  const overall = runProgressWords(view, { now, glyphs: g, compact: true, noMessage: true });
  const progress = overall === "" ? "" : ` ${g.dot} ${theme("cyan", overall)}`;
  return `${theme("bold", `piw ${g.dot} ${title}`)} ${g.dot} ${view.runId} ${g.dot} ${state}${took}${progress}${budget}${error}`;
}

/** The line under the header: the replay position, or what the run is doing now. */
export function timelineLine(
  run: OpenRun,
  shown: RunView,
  focus: string | null,
  theme: Theme,
  g: Glyphs,
  speed = 1,
): string {
  const events = run.history?.events ?? [];
  if (run.replay !== null) {
    const event = events[run.replay];
    const first = events[0];
    const offset =
      event !== undefined && first !== undefined ? ` +${formatDuration(event.at - first.at)}` : "";
    const left = run.history?.eventsOmitted ?? 0;
    const omitted = left > 0 ? `  ${left} earlier events not kept` : "";
    const by = g.ascii ? "x" : "×";
    // Stepping by hand at 1x, the line stays as it was: the speed shows once it matters.
    const play = run.playing ? `  playing ${speed}${by}` : speed === 1 ? "" : `  paused ${speed}${by}`;
    return theme(
      "yellow",
      `${g.replay} replay ${run.replay + 1}/${events.length}  ${event === undefined ? "" : describeEvent(event)}${offset}${play}  (end: live)${omitted}`,
    );
  }
  const word = runStateWord(shown);
  if (word === "waiting") {
    // The checkpoint the run stopped at, and the command that answers it.
    const at = shown.cursor?.path ?? focus;
    const where = at === null ? "" : ` at ${at}`;
    return theme(
      "yellow",
      `${g.run.waiting} waiting${where}  answer with: piw answer ${shown.runId} '<json>'`,
    );
  }
  const at = focus === null ? "" : `  at ${focus}`;
  if (!isRunLive(shown)) {
    return `${theme("dim", `${g.dot} finished`)}${at}`;
  }
  const following = run.selected === null && (shown.status === "running" || shown.status === "starting");
  const where = focus === null ? "" : following ? `  following ${focus}` : at;
  const reason =
    shown.status === "parked" && shown.recoveryReason !== null
      ? theme("yellow", `  parked: ${recoveryWords(shown.recoveryReason)}`)
      : "";
  return `${theme("green", `${g.live} live`)}${where}${reason}`;
}
