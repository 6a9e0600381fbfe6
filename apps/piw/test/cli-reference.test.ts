import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderCliReference } from "../src/cli-reference.js";
import { COMMAND_TABLE } from "../src/command-table.js";
import { EXIT_CODE_TABLE } from "../src/exit-codes.js";
import { OUTPUT_SCHEMA_VERSIONS } from "../src/output-schema-versions.js";
import { COMMAND_USAGE } from "../src/usage.js";
import { repo } from "./cli-harness.js";

describe("the CLI reference comes from the command table", () => {
  it("docs/cli.md is what pnpm docs:cli writes (run it after changing a command or flag)", () => {
    expect(readFileSync(join(repo, "docs", "cli.md"), "utf8")).toBe(renderCliReference());
  });

  it("names every flag of every command, every exit code and every --json schema version", () => {
    const reference = renderCliReference();
    for (const [name, spec] of Object.entries(COMMAND_TABLE)) {
      expect(reference).toContain(`### piw ${name}`);
      for (const flag of Object.keys(spec.options)) {
        expect(reference, `${name} --${flag}`).toContain(`--${flag}`);
        expect(COMMAND_USAGE[name as keyof typeof COMMAND_USAGE], `${name} --help`).toContain(`--${flag}`);
      }
    }
    for (const flag of ["--limit <n>", "--width <n>", "--happened <json>"]) expect(reference).toContain(flag);
    for (const { code } of EXIT_CODE_TABLE) expect(reference).toMatch(new RegExp(`^\\| ${code} +\\|`, "m"));
    for (const version of Object.values(OUTPUT_SCHEMA_VERSIONS))
      expect(reference).toContain(`\`${version}\``);
  });

  it("README's exit codes are the table's", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    const list = /Exit codes: (.+?) \(the table/.exec(readme.replaceAll("\n", " "))?.[1] ?? "";
    const listed = [...list.matchAll(/(\d+) /g)].map((match) => Number(match[1]));
    expect(listed).toEqual(EXIT_CODE_TABLE.map(({ code }) => code));
  });
});
