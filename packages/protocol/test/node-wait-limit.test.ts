import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_NODE_TIMEOUT_MS } from "../src/index.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const OWNER = "packages/protocol/src/run-records.ts";
/** Seven days written out in any usual way: as a product of units, or as its number of ms or s. */
const SEVEN_DAYS = /\b7\s*\*\s*24\s*\*|\b604_?800_?000\b|\b604_?800\b/;

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

const spellsSevenDays = (file: string) => SEVEN_DAYS.test(readFileSync(join(REPO, file), "utf8"));

describe("one owner of the 7-day limit on a node's wait", () => {
  it("is seven days", () => {
    expect(MAX_NODE_TIMEOUT_MS).toBe(7 * 24 * 60 * 60 * 1000);
  });

  it("finds it where it is owned, so the scan can see it", () => {
    expect(spellsSevenDays(OWNER)).toBe(true);
  });

  it("has no other src file that spells seven days: they import MAX_NODE_TIMEOUT_MS", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => file !== OWNER && spellsSevenDays(file))).toEqual([]);
  });
});
