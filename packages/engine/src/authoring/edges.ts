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

export type WorkflowEdge = GotoEdge | RouteEdge<never> | DecisionEdge;

/** Routes each choice of a decision node; `tsc` rejects a missing, extra or misspelled case or target. */
export function decisionEdge<const Cases extends Record<string, string>>(cases: Cases): DecisionEdge<Cases> {
  return { kind: "decision", cases };
}
