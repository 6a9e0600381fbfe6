import { applyProgressUpdate, type NodeProgressReport, type ProgressState } from "@piw/protocol";
import { LatestThrottle } from "./latest-throttle.js";

/** The least time between two progress reports one visit sends; the latest waits out the rest. */
export const NODE_PROGRESS_INTERVAL_MS = 250;

/** Marks a ProgressInvalid across engine copies (a workflow file may see another module instance). */
const PROGRESS_INVALID = Symbol.for("piw.progress-invalid");

/**
 * `ctx.progress` refused an update (not an object, an unknown field, an amount that is not a finite
 * number >= 0, a message that is not a string, done above total). Nothing was reported. It fails the
 * node only if the author's code lets it propagate; the message names fields, never values.
 */
export class ProgressInvalid extends Error {
  override readonly name = "ProgressInvalid";
  readonly code = "progress_invalid";
  readonly [PROGRESS_INVALID] = true;

  /** `problem`: which field is wrong and why, in piw's words. */
  constructor(readonly problem: string) {
    super(`ctx.progress refused the update: ${problem}.`);
  }
}

export function isProgressInvalid(value: unknown): value is ProgressInvalid {
  return value instanceof Error && (value as { [PROGRESS_INVALID]?: unknown })[PROGRESS_INVALID] === true;
}

/** One visit attempt's progress: checked and merged on every call, sent rate-limited. */
export interface VisitProgress {
  /** `ctx.progress`: throws ProgressInvalid for a bad update. */
  report(update: unknown): void;
  /** Send what waits now; the executor calls it before the visit's end is saved. */
  flush(): void;
}

/**
 * Progress for one attempt of one visit. Each update is checked against the attempt's state so far
 * (a field left out keeps its value), then sent through `send` at most every
 * NODE_PROGRESS_INTERVAL_MS; without `send` (a port that keeps no progress) it is checked and dropped.
 */
export function visitProgress(
  where: { path: string; visit: number; attempt: number },
  send: ((report: NodeProgressReport) => void) | undefined,
): VisitProgress {
  let state: ProgressState | null = null;
  const throttle = new LatestThrottle<ProgressState>(
    (latest) => send?.({ ...where, state: latest }),
    NODE_PROGRESS_INTERVAL_MS,
  );
  return {
    report(update) {
      const checked = applyProgressUpdate(state, update);
      if (!checked.ok) throw new ProgressInvalid(checked.problem);
      state = checked.state;
      throttle.push(checked.state);
    },
    flush: () => throttle.flush(),
  };
}

/** `ctx.progress` where no visit runs (a waiting checkpoint's prompt): checked, then dropped. */
export function checkProgressOnly(update: unknown): void {
  const checked = applyProgressUpdate(null, update);
  if (!checked.ok) throw new ProgressInvalid(checked.problem);
}
