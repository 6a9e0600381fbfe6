import type { NodeProgress, RunRecord } from "@piw/protocol";
import type { NodeProgressRecord } from "@piw/store";
import { estimateEta } from "./progress-eta.js";

/**
 * The view's `progress`: one entry per open visit of a running run that reported progress, with
 * the ETA its saved readings give. Absent when there is none, so views without progress stay as
 * they were.
 */
export function nodeProgressOf(
  run: RunRecord,
  saved: () => NodeProgressRecord[],
): { progress?: NodeProgress[] } {
  if (run.status !== "running" && run.status !== "starting") return {};
  const progress = saved().map((record) => ({
    path: record.path,
    visit: record.visit,
    ...record.state,
    updatedAt: record.updatedAt,
    eta: estimateEta(record.samples, record.state.total),
  }));
  return progress.length === 0 ? {} : { progress };
}
