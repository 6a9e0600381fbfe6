import { COMMAND_TABLE, ENVIRONMENT } from "./command-table.js";
import { EXIT_CODE_TABLE } from "./exit-codes.js";
import { OUTPUT_SCHEMA_VERSIONS } from "./output-schemas.js";
import { COMMAND_USAGE, flagText, MAIN_USAGE } from "./usage.js";

/** A table cell: one line, with `|` escaped. */
const cell = (text: string) => text.replaceAll("\n", " ").replaceAll("|", "\\|");

/**
 * docs/cli.md: every command and flag, the environment, the exit codes and the `--json` schema
 * versions, all from the tables the CLI itself uses (`pnpm docs:cli` writes it; a test checks it).
 */
export function renderCliReference(): string {
  const lines = [
    "# piw command reference",
    "",
    "<!-- Written by `pnpm docs:cli` from apps/piw/src/command-table.ts; do not edit by hand. -->",
    "",
    "```text",
    MAIN_USAGE,
    "```",
    "",
    "## Commands",
    "",
  ];
  for (const [name, spec] of Object.entries(COMMAND_TABLE)) {
    lines.push(`### piw ${name}`, "", spec.summary.charAt(0).toUpperCase() + spec.summary.slice(1) + ".", "");
    lines.push("| flag | what it does |", "| --- | --- |");
    for (const [flag, option] of Object.entries(spec.options)) {
      const repeat = option.multiple === true ? " (repeatable)" : "";
      lines.push(`| \`${cell(flagText(flag, option))}\` | ${cell(option.help)}${repeat} |`);
    }
    const schema = Object.hasOwn(OUTPUT_SCHEMA_VERSIONS, name)
      ? OUTPUT_SCHEMA_VERSIONS[name as keyof typeof OUTPUT_SCHEMA_VERSIONS]
      : undefined;
    if (spec.json && schema !== undefined) lines.push("", `\`--json\` prints one object with \`"schema": "${schema}"\`.`);
    lines.push("", "```text", COMMAND_USAGE[name as keyof typeof COMMAND_USAGE], "```", "");
  }
  lines.push("## Environment", "", "| variable | meaning |", "| --- | --- |");
  for (const { name, help } of ENVIRONMENT) lines.push(`| \`${name}\` | ${cell(help)} |`);
  lines.push("", "## Exit codes", "", "| code | meaning |", "| --- | --- |");
  for (const { code, meaning } of EXIT_CODE_TABLE) lines.push(`| ${code} | ${cell(meaning)} |`);
  lines.push(
    "",
    "## JSON output",
    "",
    "With `--json` a command prints one JSON object on stdout. Its `schema` field names the shape and",
    "its version; a version changes only when a field changes meaning or goes away (new fields may be",
    "added within a version). A command that fails with `--json` prints a `piw.error.v1` object (and",
    "the same message on stderr) and exits with the code from the table above.",
    "",
    "| output | schema |",
    "| --- | --- |",
  );
  for (const [name, version] of Object.entries(OUTPUT_SCHEMA_VERSIONS)) lines.push(`| ${name} | \`${version}\` |`);
  lines.push("");
  return lines.join("\n");
}
