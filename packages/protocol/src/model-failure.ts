/**
 * Why a model failed for good, read from the provider's error text: another turn would fail the
 * same way, so the step fails (`model_unavailable`) instead of counting lost turns. Anything else
 * (a 5xx, a dropped connection, a rate limit) may heal and stays a lost turn.
 */
type ModelFailure = "credentials" | "unknown_model" | "quota";

/** Patterns in the order they are tried: a quota error may also say 403, and it is a quota error. */
const FAILURES: readonly (readonly [ModelFailure, RegExp])[] = [
  [
    "quota",
    /insufficient_quota|quota exceeded|exceeded your (?:current )?quota|billing|out of budget|credit balance|usage limit/i,
  ],
  [
    "credentials",
    /(?<![a-z0-9])(?:401|403)(?![a-z0-9])|unauthori[sz]ed|forbidden|no api key|invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|authentication|permission[ _]denied/i,
  ],
  [
    "unknown_model",
    /(?<![a-z0-9])404(?![a-z0-9])|model[ _]not[ _]found|unknown model|no such model|model\b.{0,120}\b(?:does not exist|not found|not supported)/i,
  ],
];

/** The failure a provider's error text shows, or null when another turn may succeed. */
export function modelFailureOf(text: string): ModelFailure | null {
  for (const [failure, pattern] of FAILURES) if (pattern.test(text)) return failure;
  return null;
}
