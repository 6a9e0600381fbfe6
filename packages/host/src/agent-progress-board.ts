import { AGENT_ACTIVITY_MAX, type AgentProgress } from "@piw/protocol";
import { LiveTranscripts } from "./live-transcripts.js";

/** How many runs' progress the host keeps; the run reported least recently is forgotten first. */
const PROGRESS_RUNS_MAX = 200;
/** The facts one open visit keeps for the viewer's conversation tab: the latest ones. */
const VISIT_FACTS_MAX = 40;

interface RunProgress {
  /** The latest fact of the run, whichever visit sent it: it outlives the visit and the worker. */
  latest: AgentProgress;
  /** The latest fact of each open agent visit, by `path#visit`, with the launch that sent it. */
  open: Map<string, { progress: AgentProgress; launchId: string; facts: AgentProgress[] }>;
}

const visitKey = (path: string, visit: number): string => `${path}#${visit}`;

/**
 * Isolated agent steps' progress per run, in the host's memory only: workers report it
 * (`agent.progress`), every run view shows it, so a follower, `piw status`, the widget and the
 * viewer all can. Parallel branches run several agent visits at once, so it keeps one entry per
 * open visit (at most AGENT_ACTIVITY_MAX a run), dropped when the visit finishes, the run ends or
 * the worker that reported it is gone; and the run's latest fact, which outlives all of them so a
 * run's last view still shows its accepted output.
 */
export class AgentProgressBoard {
  private readonly runs = new Map<string, RunProgress>();
  /** Running agent steps' live transcripts, which end with their visits as the facts do. */
  readonly live: LiveTranscripts;

  /** `liveChanged`: a run's live transcripts moved (rate-limited): publish its view. */
  constructor(liveChanged: (runId: string) => void = () => {}) {
    this.live = new LiveTranscripts(liveChanged);
  }

  set(runId: string, progress: AgentProgress, launchId: string): void {
    const run = this.runs.get(runId) ?? { latest: progress, open: new Map() };
    this.runs.delete(runId);
    this.runs.set(runId, run);
    run.latest = progress;
    const key = visitKey(progress.path, progress.visit);
    const before = run.open.get(key);
    // A new attempt starts its own list: the facts shown are the attempt's own.
    const kept = before?.progress.attempt === progress.attempt ? before.facts : [];
    const facts = [...kept.slice(-(VISIT_FACTS_MAX - 1)), progress];
    run.open.delete(key);
    run.open.set(key, { progress, launchId, facts });
    if (run.open.size > AGENT_ACTIVITY_MAX) {
      const oldest = run.open.keys().next().value;
      if (oldest !== undefined) run.open.delete(oldest);
    }
    if (this.runs.size > PROGRESS_RUNS_MAX) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
  }

  /** The run's latest fact, from whichever visit reported last. */
  get(runId: string): AgentProgress | undefined {
    return this.runs.get(runId)?.latest;
  }

  /** The latest fact of each of the run's open agent visits, in the order they first reported. */
  activity(runId: string): AgentProgress[] {
    return [...(this.runs.get(runId)?.open.values() ?? [])].map((entry) => entry.progress);
  }

  /** The open visit's latest facts, oldest first: what it did so far, as it happened. */
  visitFacts(runId: string, path: string, visit: number): AgentProgress[] {
    return this.runs.get(runId)?.open.get(visitKey(path, visit))?.facts ?? [];
  }

  /** The visit finished: its activity is over. */
  finishVisit(runId: string, path: string, visit: number): void {
    this.runs.get(runId)?.open.delete(visitKey(path, visit));
    this.live.finishVisit(runId, path, visit);
  }

  /** The run finished or parked: none of its agent visits is open any more. */
  endRun(runId: string): void {
    this.runs.get(runId)?.open.clear();
    this.live.endRun(runId);
  }

  /** The launch's worker is gone: the visits it reported are no longer running in it. */
  dropLaunch(runId: string, launchId: string): void {
    this.live.dropOwner(runId, launchId);
    const open = this.runs.get(runId)?.open;
    if (open === undefined) return;
    for (const [key, entry] of open) if (entry.launchId === launchId) open.delete(key);
  }
}
