import { parseArgs } from "node:util";
import { usageError } from "./cli-error.js";
import type { CommandName, OptionSpec } from "./command-table.js";

type ParseConfig<T extends Readonly<Record<string, OptionSpec>>> = {
  -readonly [K in keyof T]: {
    type: T[K]["type"];
    short?: string;
    multiple: T[K] extends { multiple: true } ? true : false;
  };
};

/** The command table's options as node:util's parseArgs takes them (help texts left out). */
function parseConfig<T extends Readonly<Record<string, OptionSpec>>>(options: T): ParseConfig<T> {
  const config: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, option] of Object.entries(options)) {
    config[name] = {
      type: option.type,
      ...(option.short === undefined ? {} : { short: option.short }),
      multiple: option.multiple === true,
    };
  }
  return config as ParseConfig<T>;
}

/**
 * Parse one command's arguments strictly, with the options the command table gives it: unknown
 * options and missing values are usage errors that name the command. `--` ends the options, so task
 * words may start with a dash.
 */
export function parseCommandLine<T extends Readonly<Record<string, OptionSpec>>>(
  command: CommandName,
  args: string[],
  table: T,
) {
  const options = parseConfig(table);
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages run on with advice about `--`; the first sentence is the problem.
    const message = error instanceof Error ? (error.message.split(". ")[0] ?? error.message) : String(error);
    throw usageError(message.replace(/\.$/, ""), command);
  }
}
