import type { ViewValue } from "@piw/protocol";
import type { Style } from "./style.js";

/** How many lines of a value `piw run` and `piw status` show before folding the rest. */
const FOLD_LINES = 20;
const MAX_LINE = 200;
const ONE_LINE = 80;

/** A value as people read it: text as it is, short JSON on one line, longer JSON indented. */
function prettyLines(value: unknown): string[] {
  if (typeof value === "string") return value.split("\n");
  const compact = JSON.stringify(value);
  return compact.length <= ONE_LINE ? [compact] : JSON.stringify(value, null, 2).split("\n");
}

/**
 * A run's input or output under a label, folded after FOLD_LINES lines (and long lines clipped), with
 * the command that shows all of it. An output too large for the view says only its size.
 */
export function renderValueLines(label: string, value: ViewValue, runId: string, style: Style): string[] {
  const all = `piw status ${runId} --json`;
  if (value.kind === "omitted")
    return [`${label.padEnd(9)} ${style.dim(`${value.bytes} bytes, too large to show`)}`];
  if (value.kind === "cleared")
    return [
      `${label.padEnd(9)} ${style.dim("cleared (the launch ended before it ran, so it was not kept)")}`,
    ];
  const lines = prettyLines(value.value).map((line) =>
    line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line,
  );
  const shown = lines.slice(0, FOLD_LINES);
  const out =
    shown.length === 1 ? [`${label.padEnd(9)} ${shown[0]}`] : [label, ...shown.map((line) => `  ${line}`)];
  if (lines.length > shown.length)
    out.push(style.dim(`  … ${lines.length - shown.length} more lines (${all})`));
  return out;
}
