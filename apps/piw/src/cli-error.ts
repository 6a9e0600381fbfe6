import { ExitCode } from "./exit-codes.js";

/** An expected failure of a command: printed as one line (plus optional detail lines), never a stack. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.failed,
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

export function usageError(message: string, command?: string): CliError {
  const help = command === undefined ? "piw --help" : `piw ${command} --help`;
  return new CliError(message, ExitCode.usage, [`see ${help}`]);
}
