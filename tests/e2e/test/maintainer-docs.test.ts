import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../src/piw-fixture.ts";

/** The maintainer pages that restate what the repository holds agree with it. */

/** The first cell of every body row of the first table after `## <heading>`. */
function firstColumn(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const section = markdown.slice(start + 1).split(/\n## /)[0] ?? "";
  const rows = section.split("\n").filter((line) => line.startsWith("|"));
  return rows.slice(2).map((row) => row.split("|")[1]?.trim() ?? "");
}

/** The `pnpm <script>` names a command table lists, in order. */
function listedScripts(markdown: string): string[] {
  return firstColumn(markdown, "Commands").flatMap((cell) =>
    [...cell.matchAll(/`pnpm ([\w:-]+)`/g)].map((match) => match[1] ?? ""),
  );
}

describe("docs/maintainers/development.md", () => {
  it("lists every script of the root package.json in its command table, and nothing else", () => {
    const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const listed = listedScripts(readFileSync(join(REPO, "docs", "maintainers", "development.md"), "utf8"));
    expect(new Set(listed).size, "each script once").toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(manifest.scripts).sort());
  });

  it("reads the table's rows (the checker itself)", () => {
    const page =
      "# x\n\n## Commands\n\n| command | what |\n| --- | --- |\n| `pnpm a` / `pnpm a:b` | c |\n\n## Next\n";
    expect(listedScripts(page)).toEqual(["a", "a:b"]);
    expect(listedScripts(page.replace("| `pnpm a` / `pnpm a:b` | c |\n", ""))).toEqual([]);
  });
});
