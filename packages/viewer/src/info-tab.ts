import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { RunView, ViewValue } from "@piw/protocol";
import { formatDuration } from "./format.js";
import type { Glyphs } from "./glyphs.js";
import { jsonLines } from "./json-lines.js";
import type { TabLines } from "./trace-tab.js";
import { clipToWidth } from "./text-width.js";
import type { Theme } from "./theme.js";

/** A titled block of the Info tab that another part of piw supplies (a schedule, a budget). */
interface InfoSection {
  title: string;
  lines: string[];
}

/**
 * The Info tab's places for what runs may carry beyond the view's core: each null when the run has
 * none, so the tab leaves it out. Filled by whoever adds the fact to the run view.
 */
interface RunInfoExtras {
  schedule: InfoSection | null;
  budget: InfoSection | null;
}

const NO_INFO_EXTRAS: RunInfoExtras = { schedule: null, budget: null };

export interface InfoOptions {
  width: number;
  theme: Theme;
  glyphs: Glyphs;
  extras?: RunInfoExtras;
}

function valueLines(value: ViewValue): string[] {
  switch (value.kind) {
    case "json":
      return jsonLines(value.value, { maxEntries: 12 });
    case "omitted":
      return [`(${value.bytes} bytes: too large to show here; piw status --json has it)`];
    case "cleared":
      return ["(cleared: the launch ended before the run started)"];
    default:
      return value satisfies never;
  }
}

/**
 * The run as a whole: what it was asked (its input, summarised), what it produced, where its
 * definition came from, and how it relates to other runs (parent, continuation, restart).
 */
export function renderInfo(shown: RunView, options: InfoOptions): TabLines {
  const { theme, width, glyphs: g } = options;
  const lines: string[] = [];
  const push = (line: string) => lines.push(clipToWidth(line, width, g.ellipsis));
  const heading = (text: string) => {
    if (lines.length > 0) push("");
    push(theme("bold", text));
  };
  heading("run");
  push(`  workflow  ${shown.workflowName}${shown.title === null ? "" : `  (${shown.title})`}`);
  push(
    `  started   ${shown.origin.kind === "pi" ? `from Pi session ${shown.origin.sessionId}` : "from the CLI"}`,
  );
  if (shown.startedAt !== null)
    push(
      `  ran       ${formatDuration((shown.finishedAt ?? shown.startedAt) - shown.startedAt)}${shown.finishedAt === null ? " so far" : ""}`,
    );
  heading("input");
  for (const line of wrapTextWithAnsi(shown.inputSummary ?? "(not in this view)", Math.max(8, width - 2)))
    push(`  ${line}`);
  heading("output");
  if (shown.outcome !== "completed" || shown.output === undefined || shown.output === null)
    push(theme("dim", "  none yet"));
  else for (const line of valueLines(shown.output)) push(`  ${line}`);
  heading("source");
  switch (shown.source.kind) {
    case "file":
      push(`  file      ${shown.source.path}`);
      push(`  sha256    ${shown.source.sha256}`);
      break;
    case "builtin":
      push(`  built-in  ${shown.source.id}`);
      push(`  revision  ${shown.source.revision}`);
      break;
    default:
      shown.source satisfies never;
  }
  heading("lineage");
  const command =
    shown.originCommand === "restart"
      ? `restart #${shown.restartNumber}`
      : shown.originCommand === "continue"
        ? "continuation of an answered checkpoint"
        : "new run";
  push(`  made by   ${command}`);
  push(`  parent    ${shown.parentRunId ?? "none"}`);
  push(`  root      ${shown.rootRunId}`);
  push(`  continued ${shown.continuedAs ?? "no"}`);
  const extras = options.extras ?? NO_INFO_EXTRAS;
  for (const section of [extras.schedule, extras.budget]) {
    if (section === null) continue;
    heading(section.title);
    for (const line of section.lines) push(`  ${line}`);
  }
  return { lines, anchor: 0 };
}
