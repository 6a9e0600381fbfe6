// Apart from the view's schema, so that the quick routes' checks can read it without loading zod.

/** The most passed visits one view carries (see `RunView.passed`): the newest are kept. */
export const PASSED_VISITS_MAX = 100;

/** A visit and attempt of one node path. */
export interface VisitMark {
  visit: number;
  attempt: number;
}

/** Whether `a` is a later visit (or a later attempt of the same visit) than `b`; anything is later than none. */
export const isLaterVisit = (a: VisitMark, b: VisitMark | undefined): boolean =>
  b === undefined || a.visit > b.visit || (a.visit === b.visit && a.attempt > b.attempt);
