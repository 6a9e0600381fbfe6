import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..", "..");
const OWNER = "packages/state-dir/src/";

/** Spellings of Pi's default agent folder: `.pi/agent` in text, or `".pi", "agent"` as path parts. */
const AGENT_DIR_SPELLINGS = [/\.pi[/\\]agent/, /["'`]\.pi["'`]\s*,\s*["'`]agent["'`]/];

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) files.push(path);
  }
  return files;
}

/** Every src/ file of every package and app, as repo-relative paths. */
function allSourceFiles(): string[] {
  const files: string[] = [];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(REPO, group))) {
      try {
        files.push(...sourceFiles(join(REPO, group, name, "src")));
      } catch {
        // A folder without src/ has no source to check.
      }
    }
  }
  return files.map((file) => relative(REPO, file));
}

function spellsAgentDir(file: string): boolean {
  const text = readFileSync(join(REPO, file), "utf8");
  return AGENT_DIR_SPELLINGS.some((pattern) => pattern.test(text));
}

describe("one owner of Pi's agent folder", () => {
  it("finds the spelling where it is owned, so the scan can see it", () => {
    const owned = allSourceFiles().filter((file) => file.startsWith(OWNER) && spellsAgentDir(file));
    // The folder as Pi computes it, and as help texts name it (the `PIW_HOME` entry of the variable table).
    expect(owned).toEqual([`${OWNER}agent-dir.ts`, `${OWNER}piw-env.ts`]);
  });

  it("has no other src file that spells ~/.pi/agent: they take it from @piw/state-dir", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    const others = files.filter((file) => !file.startsWith(OWNER) && spellsAgentDir(file));
    expect(others).toEqual([]);
  });
});
