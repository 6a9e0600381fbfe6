import { COMMAND_TABLE, ENVIRONMENT } from "./command-table.js";
import { EXIT_CODE_TABLE } from "./exit-codes.js";
import { OUTPUT_SCHEMA_VERSIONS } from "./output-schema-versions.js";
import { COMMAND_USAGE, flagText, MAIN_USAGE } from "./usage.js";

/** A table cell: one line, with `|` escaped. */
const cell = (text: string) => text.replaceAll("\n", " ").replaceAll("|", "\\|");

/** A Markdown table with its columns padded, as the formatter (biome) lays it out. */
function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((title, i) =>
    Math.max(title.length, 3, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

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
    lines.push(`### piw ${name}`, "", `${spec.summary.charAt(0).toUpperCase()}${spec.summary.slice(1)}.`, "");
    const flags = Object.entries(spec.options).map(([flag, option]) => [
      `\`${cell(flagText(flag, option))}\``,
      `${cell(option.help)}${option.multiple === true ? " (repeatable)" : ""}`,
    ]);
    lines.push(...table(["flag", "what it does"], flags));
    const schema = Object.hasOwn(OUTPUT_SCHEMA_VERSIONS, name)
      ? OUTPUT_SCHEMA_VERSIONS[name as keyof typeof OUTPUT_SCHEMA_VERSIONS]
      : undefined;
    if (spec.json && schema !== undefined)
      lines.push("", `\`--json\` prints one object with \`"schema": "${schema}"\`.`);
    lines.push("", "```text", COMMAND_USAGE[name as keyof typeof COMMAND_USAGE], "```", "");
  }
  lines.push("## Environment", "");
  lines.push(
    ...table(
      ["variable", "meaning"],
      ENVIRONMENT.map(({ name, help }) => [`\`${name}\``, cell(help)]),
    ),
  );
  lines.push("", "## Exit codes", "");
  lines.push(
    ...table(
      ["code", "meaning"],
      EXIT_CODE_TABLE.map(({ code, meaning }) => [String(code), cell(meaning)]),
    ),
  );
  lines.push(
    "",
    "## JSON output",
    "",
    "With `--json` a command prints one JSON object on stdout. Its `schema` field names the shape and",
    "its version; a version changes only when a field changes meaning or goes away (new fields may be",
    "added within a version). A command that fails with `--json` prints a `piw.error.v1` object (and",
    "the same message on stderr) and exits with the code from the table above.",
    "",
    ...table(
      ["output", "schema"],
      Object.entries(OUTPUT_SCHEMA_VERSIONS).map(([name, version]) => [name, `\`${version}\``]),
    ),
    "",
  );
  return lines.join("\n");
}
