/** Help texts, rendered from the command table: what `piw --help` and `piw <command> --help` print. */
import {
  COMMAND_TABLE,
  type CommandName,
  type CommandSpec,
  ENVIRONMENT,
  type OptionSpec,
} from "./command-table.js";
import { EXIT_CODE_TABLE } from "./exit-codes.js";

export type { CommandName } from "./command-table.js";

/** `-h, --help` or `--limit <n>`: how a flag is written. */
export function flagText(name: string, option: OptionSpec): string {
  const long = `--${name}${option.value === undefined ? "" : ` ${option.value}`}`;
  return option.short === undefined ? long : `-${option.short}, ${long}`;
}

function columns(rows: ReadonlyArray<readonly [string, string]>, indent = "  "): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}   ${right}`);
}

function commandUsage(spec: CommandSpec): string {
  const [first, ...rest] = spec.usage;
  const lines = [`Usage: piw ${first}`, ...rest.map((line) => `       piw ${line}`), "", spec.about];
  const options = Object.entries(spec.options).map(
    ([flag, option]) => [flagText(flag, option), option.help] as const,
  );
  lines.push("", "Options:", ...columns(options));
  if (spec.notes !== undefined) lines.push("", spec.notes);
  if (spec.examples !== undefined)
    lines.push("", "Examples:", ...spec.examples.map((example) => `  ${example}`));
  return lines.join("\n");
}

export const COMMAND_USAGE = Object.fromEntries(
  Object.entries(COMMAND_TABLE).map(([name, spec]) => [name, commandUsage(spec)]),
) as { readonly [K in CommandName]: string };

export const MAIN_USAGE = [
  "piw — run and follow durable workflows from a shell",
  "",
  "Usage: piw <command> [options]",
  "       piw                             (in a terminal) the interactive viewer",
  "",
  "Commands:",
  ...columns(Object.values(COMMAND_TABLE).map((spec) => [spec.synopsis, spec.summary] as const)),
  "",
  "Options:",
  ...columns([
    ["-h, --help", "help for piw or for any command (piw run --help)"],
    ["-V, --version", "the version of piw"],
    ["--json", "on every command but view and host: one JSON object with a schema version"],
  ]),
  "",
  "Environment:",
  ...columns(ENVIRONMENT.map(({ name, help }) => [name, help] as const)),
  "",
  "Exit codes:",
  ...columns(EXIT_CODE_TABLE.map(({ code, meaning }) => [String(code), meaning] as const)),
].join("\n");
