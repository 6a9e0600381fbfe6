import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "@piw/test-kit";

/** The pages that restate what the repository holds agree with it, and keep their shape. */

/** The cells of every body row of the first table after `## <heading>`. */
function tableRows(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const section = markdown.slice(start + 1).split(/\n## /)[0] ?? "";
  const rows = section.split("\n").filter((line) => line.startsWith("|"));
  return rows.slice(2).map((row) =>
    row
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim()),
  );
}

function firstColumn(markdown: string, heading: string): string[] {
  return tableRows(markdown, heading).map((cells) => cells[0] ?? "");
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

describe("docs/performance.md", () => {
  const page = readFileSync(join(REPO, "docs", "performance.md"), "utf8");

  it("opens with the table of current figures, before any bench's section", () => {
    expect(page.indexOf("\n## ")).toBe(page.indexOf("\n## Current figures\n"));
  });

  it("gives every row of that table its date, commit, load and command, so each can be measured again", () => {
    const header = page.split("\n").find((line) => line.startsWith("| bench "));
    expect(header?.split("|").map((cell) => cell.trim())).toEqual([
      "",
      "bench",
      "figure",
      "value",
      "goal",
      "date",
      "commit",
      "load",
      "command",
      "",
    ]);
    const rows = tableRows(page, "Current figures");
    expect(rows.length).toBeGreaterThan(10);
    for (const [bench, figure, value, goal, date, commit, load, command] of rows) {
      const row = `${bench}: ${figure}`;
      expect(value, row).toBeTruthy();
      expect(goal, row).toBeTruthy();
      expect(date, row).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(commit, row).toMatch(/`[0-9a-f]{7,}`/);
      expect(load, row).toMatch(/\d/);
      expect(command, row).toMatch(/^`(\w+=\S+ )*pnpm bench:[a-z]+`$/);
    }
  });
});
