import { DAY_MS, type ScheduleRecord } from "@piw/protocol";
import { formatAge, formatDuration } from "./render-run.js";
import { plain, table } from "./render-list.js";
import type { Style } from "./style.js";

/** An interval as it was most likely written: `30s`, `30m`, `2h`, `1d`. */
function intervalText(ms: number): string {
  for (const [unit, size] of [
    ["d", DAY_MS],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function timingText(schedule: ScheduleRecord): string {
  const { timing } = schedule;
  if (timing.kind === "every") return `every ${intervalText(timing.everyMs)}`;
  return `cron ${timing.expression}${timing.timeZone === undefined ? "" : ` ${timing.timeZone}`}`;
}

function nextText(schedule: ScheduleRecord, now: number): string {
  if (schedule.nextAt === null) return "ended";
  const at = new Date(schedule.nextAt).toISOString().replace(/\.\d+Z$/, "Z");
  return schedule.nextAt > now ? `${at} (in ${formatDuration(schedule.nextAt - now)})` : `${at} (due)`;
}

function lastText(schedule: ScheduleRecord, now: number): string {
  const last = schedule.lastFiring;
  if (last === null) return "-";
  const when = formatAge(last.at, now);
  switch (last.outcome) {
    case "started": {
      const state = last.runOutcome ?? last.runStatus ?? "gone";
      return `${when}: ${last.runId ?? "?"} ${state}`;
    }
    case "failed":
      return `${when}: failed (${last.error?.code ?? "?"}): ${last.error?.message ?? ""}`;
    case "skipped":
      return `${when}: skipped (a run was active)`;
    case "buffered":
      return `${when}: buffered until the active run ends`;
    case "missed":
      return `${when}: missed (the host was down past the catch-up window)`;
    default:
      return last.outcome satisfies never;
  }
}

function stateText(schedule: ScheduleRecord): string {
  if (!schedule.paused) return schedule.failures > 0 ? `active (${schedule.failures} failed)` : "active";
  const why = schedule.pauseReason === "failures" ? "failures" : "by request";
  return `paused (${why}${schedule.pauseNote === null ? "" : `: ${schedule.pauseNote}`})`;
}

/** `piw schedule list`: one row per schedule. */
export function renderScheduleList(
  schedules: readonly ScheduleRecord[],
  style: Style,
  now: number,
): string[] {
  if (schedules.length === 0) return ["no schedules"];
  const rows = schedules.map((schedule) => [
    plain(schedule.scheduleId),
    plain(schedule.workflowRef.split("/").pop() ?? schedule.workflowRef),
    plain(timingText(schedule)),
    plain(stateText(schedule)),
    plain(schedule.paused ? "-" : nextText(schedule, now)),
    plain(lastText(schedule, now)),
  ]);
  return table(["SCHEDULE", "WORKFLOW", "TIMING", "STATE", "NEXT", "LAST"], rows, style);
}
