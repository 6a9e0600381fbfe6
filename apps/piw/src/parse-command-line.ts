import { type ParseArgsConfig, parseArgs } from "node:util";
import { usageError } from "./cli-error.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

export const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const satisfies OptionsConfig;
export const JSON_OPTION = { json: { type: "boolean" } } as const satisfies OptionsConfig;

/**
 * Parse one command's arguments strictly: unknown options and missing values are usage errors that
 * name the command. `--` ends the options, so task words may start with a dash.
 */
export function parseCommandLine<T extends OptionsConfig>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages run on with advice about `--`; the first sentence is the problem.
    const message = error instanceof Error ? (error.message.split(". ")[0] ?? error.message) : String(error);
    throw usageError(message.replace(/\.$/, ""), command);
  }
}
