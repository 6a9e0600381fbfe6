import { AGENT_ACTIVITY_MAX, type LiveTranscriptSnapshot } from "@piw/protocol";

/** How many runs' live transcripts the host keeps; the run reported least recently goes first. */
const LIVE_RUNS_MAX = 200;
/** The least time between two view pushes a run's live transcripts cause: at most ten a second. */
export const LIVE_PUSH_INTERVAL_MS = 100;

/** One open visit's live transcript, and the attempt it belongs to. */
export interface LiveVisitTranscript {
  /** Null for a step in a Pi conversation: its open turn is the running attempt's. */
  attempt: number | null;
  live: LiveTranscriptSnapshot;
}

interface LiveVisit extends LiveVisitTranscript {
  /** Who reported it: a worker's launch ID, or `session:<id>` for a step in a Pi conversation. */
  owner: string;
}

interface RunLive {
  /** Grows with each report, so a view can say "read the conversation again". */
  seq: number;
  visits: Map<string, LiveVisit>;
  lastPushAt: number;
  timer: NodeJS.Timeout | undefined;
}

const visitKey = (path: string, visit: number): string => `${path}#${visit}`;

/**
 * The live transcripts of running agent steps (what the model said and did so far), in the host's
 * memory only: each is already bounded by its sender, and the host keeps one per open visit (at most
 * AGENT_ACTIVITY_MAX a run, LIVE_RUNS_MAX runs). Nothing here is saved: a visit's settled messages
 * come from its transcript or its Pi session entries once it ends. A report asks for a view push
 * through `changed`, at most once per LIVE_PUSH_INTERVAL_MS per run (the latest waits out the rest),
 * so a fast stream does not flood the viewers.
 */
export class LiveTranscripts {
  private readonly runs = new Map<string, RunLive>();

  constructor(
    private readonly changed: (runId: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  set(
    runId: string,
    at: { path: string; visit: number; attempt: number | null },
    live: LiveTranscriptSnapshot,
    owner: string,
  ): void {
    const run = this.runs.get(runId) ?? {
      seq: 0,
      visits: new Map(),
      lastPushAt: Number.NEGATIVE_INFINITY,
      timer: undefined,
    };
    this.runs.delete(runId);
    this.runs.set(runId, run);
    const key = visitKey(at.path, at.visit);
    run.visits.delete(key);
    run.visits.set(key, { attempt: at.attempt, live, owner });
    run.seq += 1;
    if (run.visits.size > AGENT_ACTIVITY_MAX) {
      const oldest = run.visits.keys().next().value;
      if (oldest !== undefined) run.visits.delete(oldest);
    }
    if (this.runs.size > LIVE_RUNS_MAX) {
      const [oldest, dropped] = this.runs.entries().next().value ?? [];
      if (oldest !== undefined) this.runs.delete(oldest);
      if (dropped?.timer !== undefined) clearTimeout(dropped.timer);
    }
    this.notify(runId, run);
  }

  /** The open visit's live transcript and the attempt it belongs to, if one was reported. */
  get(runId: string, path: string, visit: number): LiveVisitTranscript | undefined {
    return this.runs.get(runId)?.visits.get(visitKey(path, visit));
  }

  /** How many reports the run had; 0 while none. */
  seq(runId: string): number {
    return this.runs.get(runId)?.seq ?? 0;
  }

  finishVisit(runId: string, path: string, visit: number): void {
    this.runs.get(runId)?.visits.delete(visitKey(path, visit));
  }

  endRun(runId: string): void {
    this.runs.get(runId)?.visits.clear();
  }

  /** The reporter is gone (its worker exited): what it reported is no longer running. */
  dropOwner(runId: string, owner: string): void {
    const visits = this.runs.get(runId)?.visits;
    if (visits === undefined) return;
    for (const [key, entry] of visits) if (entry.owner === owner) visits.delete(key);
  }

  private notify(runId: string, run: RunLive): void {
    if (run.timer !== undefined) return;
    const wait = run.lastPushAt + LIVE_PUSH_INTERVAL_MS - this.now();
    const push = () => {
      run.timer = undefined;
      run.lastPushAt = this.now();
      this.changed(runId);
    };
    if (wait <= 0) push();
    else {
      run.timer = setTimeout(push, wait);
      run.timer.unref();
    }
  }
}
