import type { AgentProgress } from "@piw/protocol";

/** How many runs' latest progress the host keeps; the oldest reported is forgotten first. */
const PROGRESS_RUNS_MAX = 200;

/**
 * The latest isolated agent step progress per run, in the host's memory only: workers report it
 * (`agent.progress`), every run view shows it, so a follower, `piw status`, the widget and the
 * viewer all can. It outlives the worker, so a run's last view still shows its accepted output.
 */
export class AgentProgressBoard {
  private readonly latest = new Map<string, AgentProgress>();

  set(runId: string, progress: AgentProgress): void {
    this.latest.delete(runId);
    this.latest.set(runId, progress);
    if (this.latest.size > PROGRESS_RUNS_MAX) {
      const oldest = this.latest.keys().next().value;
      if (oldest !== undefined) this.latest.delete(oldest);
    }
  }

  get(runId: string): AgentProgress | undefined {
    return this.latest.get(runId);
  }
}
