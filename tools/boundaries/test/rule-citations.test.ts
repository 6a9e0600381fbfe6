import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Code and docs cite the run-state and launch rules by name (docs/maintainers/rules.md), never by
 * the numbers of the plan documents they came from, which the repository does not contain.
 */

const workspaceRoot = resolve(import.meta.dirname, "../../..");
const rulesPage = join(workspaceRoot, "docs/maintainers/rules.md");

/** A plan number after "seed", across a line break and comment leaders too ("seed\n * 003"). */
const PLAN_CITATION = /seed[\s*/#_-]*00[03]/gi;
const SCANNED = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|json|jsonc|ya?ml)$/;
/** This file, which spells the patterns out to test them. */
const THIS_FILE = "tools/boundaries/test/rule-citations.test.ts";

function sourceFiles(): string[] {
  const listed = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: workspaceRoot,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split("\n")
    .filter((file) => SCANNED.test(file) && file !== THIS_FILE && existsSync(join(workspaceRoot, file)));
}

/** Every `path:line: text` of a plan citation in the given text. */
function planCitations(file: string, text: string): string[] {
  return [...text.matchAll(PLAN_CITATION)].map((match) => {
    const line = text.slice(0, match.index).split("\n").length;
    return `${file}:${line}: ${match[0].replace(/\s+/g, " ")}`;
  });
}

describe("rule citations", () => {
  it("cite no plan document by number anywhere in the repository's source and docs", () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(500);
    const found = files.flatMap((file) =>
      planCitations(file, readFileSync(join(workspaceRoot, file), "utf8")),
    );
    expect(found).toEqual([]);
  });

  it("catch a citation split over comment lines, in a file name too, and nothing else", () => {
    expect(planCitations("a.ts", "x (seed\n * 003) y\n// Seed 000: z\nthe seed-000 bug")).toEqual([
      "a.ts:1: seed * 003",
      "a.ts:3: Seed 000",
      "a.ts:4: seed-000",
    ]);
    expect(planCitations("b.md", "`seed-000-regression.test.ts`; seed 1")).toEqual(["b.md:1: seed-000"]);
  });

  it("name, on the rules page, only test files that exist", () => {
    const page = readFileSync(rulesPage, "utf8");
    const named = [...page.matchAll(/`([\w./-]+\.test(?:-d)?\.ts)`/g)].map((match) => match[1] ?? "");
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((file) => !existsSync(join(workspaceRoot, file)))).toEqual([]);
  });

  it("give every rule a heading and a line of tests", () => {
    const page = readFileSync(rulesPage, "utf8");
    const sections = page.split(/^### /m).slice(1);
    expect(sections.length).toBeGreaterThan(10);
    for (const section of sections) {
      const heading = section.slice(0, section.indexOf("\n"));
      expect(heading, "a rule's heading is its name").toMatch(/^The [a-z-]+( [a-z-]+)* rule$/);
      expect(section, heading).toMatch(/^Tests: `/m);
    }
  });
});
