import { type Budget, parseBudgetFlag, runIdSchema, type Transition } from "@piw/protocol";
import { CliError, usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { describeConflict, describeRecoveryRequired } from "../render-conflict.js";

/** The one `<runId>` argument of a command, checked for shape before the host is asked. */
export function runIdArgument(command: string, positionals: readonly string[]): string {
  const [runId, ...extra] = positionals;
  if (runId === undefined) throw usageError(`piw ${command} needs a run ID`, command);
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`, command);
  if (!runIdSchema.safeParse(runId).success) {
    throw new CliError(
      `${JSON.stringify(runId)} is not a run ID (letters, digits, '.', '_', '-')`,
      ExitCode.usage,
    );
  }
  return runId;
}

/** The `--budget` of a command, parsed; a refusal names the limit and its form, never the value given. */
export function budgetOption(value: string | boolean | undefined, command: string): Budget | undefined {
  if (typeof value !== "string") return undefined;
  const parsed = parseBudgetFlag(value);
  if (!parsed.ok) throw usageError(parsed.error.message, command);
  return parsed.budget;
}

/** The saved value of a host change, or a one-line error for a conflict or a needed recovery. */
export function savedValue<T>(transition: Transition<T>, runId: string): T {
  switch (transition.kind) {
    case "applied":
    case "adopted":
      return transition.value;
    case "conflict":
      throw new CliError(describeConflict(transition.evidence));
    case "recoveryRequired":
      throw new CliError(describeRecoveryRequired(runId, transition.reason));
    default:
      return transition satisfies never;
  }
}
