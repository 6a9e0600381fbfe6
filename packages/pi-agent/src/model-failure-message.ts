import { modelFailureOf } from "@piw/protocol";

/**
 * An isolated step's failure message for a provider error that no retry heals, else null. It names
 * the model and what to do; never the provider's own text, which may quote a key or the request.
 */
export function modelFailureMessage(
  errorText: string,
  path: string,
  model: string,
  provider: string,
): string | null {
  const failure = modelFailureOf(errorText);
  switch (failure) {
    case null:
      return null;
    case "credentials":
      return (
        `Agent step ${path}: the provider refused the credentials for model ${model} (not authorized): ` +
        `set a valid API key for ${provider} (pi /login, auth.json or its environment variable), or pin another model.`
      );
    case "unknown_model":
      return (
        `Agent step ${path}: the provider does not know model ${model}: ` +
        "check its id (pi --list-models, models.json) or pin another model."
      );
    case "quota":
      return (
        `Agent step ${path}: the provider refused model ${model} because its quota or billing limit is spent: ` +
        `top it up with ${provider}, or pin another model.`
      );
    default:
      return failure satisfies never;
  }
}
