/** Type-only marker holding a decision edge's case names, so that an extra case fails `tsc`. */
declare const caseNames: unique symbol;

/** Always go to `to`: a node, an include (its start) or an exit of this workflow. */
export interface GotoEdge<T extends string = string> {
  readonly to: T;
  readonly label?: string;
}

/** Pick one of the declared targets `to` from the node's output. */
export interface RouteEdge<O = unknown, T extends string = string> {
  readonly to: readonly T[];
  route(output: O): T;
  readonly labels?: Partial<Record<T, string>>;
}

/** Maps every choice of a decision node to a target. Build it with `decisionEdge`. */
export interface DecisionEdge<
  Cases extends Record<string, string> = Record<string, string>,
  K extends string = keyof Cases & string,
> {
  readonly kind: "decision";
  readonly cases: Cases;
  readonly [caseNames]?: K;
}

/**
 * Where a visit that did not succeed goes instead of ending the run: a node or an include of the same
 * workflow. `onTimeout` takes a timed-out visit; without it, `onFailure` takes every failure.
 */
export interface OutcomeRoutes<T extends string = string> {
  readonly onFailure?: T;
  readonly onTimeout?: T;
}

/** A shell node's routes by exit code; a code listed here goes there even without `onFailure`. */
export interface ExitCodeRoutes<T extends string = string> {
  readonly onExitCode?: Readonly<Record<number, T>>;
}

export type WorkflowEdge = (GotoEdge | RouteEdge<never> | DecisionEdge) & OutcomeRoutes & ExitCodeRoutes;

/**
 * Routes each choice of a decision node; `tsc` rejects a missing, extra or misspelled case or target.
 * `routes` says where the visit goes when `decide` fails.
 */
export function decisionEdge<
  const Cases extends Record<string, string>,
  const R extends OutcomeRoutes = Record<never, never>,
>(cases: Cases, routes?: R): DecisionEdge<Cases> & R {
  return { ...(routes as R), kind: "decision", cases };
}
