// Errors a compiled workflow raises while a run is executing: bugs in the author's routing or
// projections, which the executor turns into a failed node visit.

export type RoutingErrorCode = "unknown_path" | "undeclared_target" | "invalid_choice";

/** `next` could not route: an unknown node path, or a route/decision that picked an undeclared target. */
export class RoutingError extends Error {
  override readonly name = "RoutingError";
  constructor(
    readonly code: RoutingErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** `scopeInput` produced an input that its workflow's input schema rejects, or an unknown scope. */
export class ScopeInputError extends Error {
  override readonly name = "ScopeInputError";
  constructor(
    readonly scope: string,
    message: string,
  ) {
    super(message);
  }
}
