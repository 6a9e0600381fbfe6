import {
  isLaterVisit,
  PASSED_VISITS_MAX,
  type PassedVisit,
  type RunView,
  type VisitMark,
} from "@piw/protocol";
import type { StepRecord } from "@piw/store";

/**
 * What the host's views of one run have shown of its node visits, so the next view can name the visits
 * that ended in between and that its `nodes` no longer show (the passed-visits rule: a follower sees
 * every visit's end, however far apart the views of a busy run are). One per run the publisher pushes.
 */
export class PassedVisits {
  /** Per path, the latest visit whose end a view showed or passed on. */
  private readonly shown = new Map<string, VisitMark>();
  private started = false;

  /**
   * The visits that ended since the last view and are not the latest of their path, oldest first,
   * bounded to the newest PASSED_VISITS_MAX; then marks everything this view shows as shown. The first
   * view of a run passes nothing on: it shows the run as it stands.
   */
  take(
    steps: readonly StepRecord[],
    latest: ReadonlyMap<string, StepRecord>,
  ): Pick<RunView, "passed" | "passedOmitted"> {
    const passed: PassedVisit[] = [];
    if (this.started) {
      for (const step of steps) {
        if (step.status === "running" || step.finishedAt === null || latest.get(step.path) === step) continue;
        if (!isLaterVisit(step, this.shown.get(step.path))) continue;
        passed.push({
          path: step.path,
          visit: step.visit,
          attempt: step.attempt,
          state: step.status,
          startedAt: step.startedAt,
          finishedAt: step.finishedAt,
          errorCode: step.errorCode,
        });
      }
    }
    this.started = true;
    for (const [path, step] of latest) {
      // An open visit's end is still to come: the mark stays just short of it.
      const mark = step.status === "running" ? { visit: step.visit, attempt: step.attempt - 1 } : step;
      this.shown.set(path, { visit: mark.visit, attempt: mark.attempt });
    }
    if (passed.length === 0) return {};
    passed.sort((a, b) => a.finishedAt - b.finishedAt || a.startedAt - b.startedAt);
    const omitted = passed.length - PASSED_VISITS_MAX;
    return omitted > 0 ? { passed: passed.slice(omitted), passedOmitted: omitted } : { passed };
  }
}
