import {
  endedBranches,
  type GraphManifest,
  isTerminalStatus,
  joinEnds,
  type NodeProgress,
  type NodeView,
  type RunRecord,
} from "@piw/protocol";
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
  graph: { manifest: GraphManifest; nodes: readonly NodeView[] },
): { progress?: NodeProgress[] } {
  if (run.status !== "running" && run.status !== "starting") return {};
  const progress = saved().map((record) => progressEntry(record, true));
  return progress.length === 0 ? {} : { progress: withEndedItems(progress, graph) };
}

/**
 * The view's `runProgress`: the run's latest run-wide report while the run lives (parked between
 * steps too), with the author's own ETA; a rate measured on a visit that may have ended says nothing.
 */
export function runProgressOf(
  run: RunRecord,
  saved: () => NodeProgressRecord | null,
): { runProgress?: NodeProgress } {
  if (isTerminalStatus(run.status)) return {};
  const record = saved();
  return record === null ? {} : { runProgress: progressEntry(record, false) };
}

function progressEntry(record: NodeProgressRecord, live: boolean): NodeProgress {
  const { done, total, message, eta } = record.state;
  return {
    path: record.path,
    visit: record.visit,
    done,
    total,
    message,
    updatedAt: record.updatedAt,
    // The author's estimate wins: it knows a deadline that no rate of `done` can see.
    eta:
      eta !== undefined ? { at: eta, confidence: "high" } : live ? estimateEta(record.samples, total) : null,
  };
}

/**
 * A map visit's count as its saved branches give it. The worker sends a map's count at most every
 * 250 ms, after the branch ends it counts are saved, so the saved count can trail the items the
 * same view shows ended; every view counts them instead, so no view shows `0/5` beside five items
 * that succeeded. An item is counted once its branch ended, however it ended.
 */
function withEndedItems(
  progress: NodeProgress[],
  { manifest, nodes }: { manifest: GraphManifest; nodes: readonly NodeView[] },
): NodeProgress[] {
  const maps = (manifest.forks ?? []).filter((fork) => fork.map === true);
  if (maps.length === 0) return progress;
  const ends = joinEnds(manifest);
  return progress.map((entry) => {
    const fork = maps.find((m) => m.path === entry.path);
    const node = nodes.find((n) => n.path === entry.path);
    if (fork === undefined || node?.state !== "running" || node.visits !== entry.visit) return entry;
    const ended = endedBranches(fork, nodes, ends);
    return ended > (entry.done ?? 0) ? { ...entry, done: ended } : entry;
  });
}
