import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { nodePathSchema, opaqueIdSchema, runIdSchema } from "../src/ids.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const OWNER = "packages/protocol/src/id-patterns.ts";

/** The heart of each ID pattern as it is spelled in source, anchors left out so a variant is caught too. */
const SPELLINGS = ["[A-Za-z0-9][A-Za-z0-9._-]", "[A-Za-z0-9_-]+(\\/[A-Za-z0-9_-]+)", "[\\x21-\\x7e]"];

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

const spelled = (file: string) => {
  const text = readFileSync(join(REPO, file), "utf8");
  return SPELLINGS.filter((spelling) => text.includes(spelling));
};

describe("one module of ID patterns", () => {
  it("finds every pattern where it is owned, so the scan can see them", () => {
    expect(spelled(OWNER)).toEqual(SPELLINGS);
  });

  it("has no other src file that spells an ID pattern: they import id-patterns.ts", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    const others = files
      .filter((file) => file !== OWNER)
      .flatMap((file) => spelled(file).map((s) => `${file}: ${s}`));
    expect(others).toEqual([]);
  });

  it("keeps the schemas' rules", () => {
    expect(runIdSchema.safeParse("hello-m3x1-4f2a").success).toBe(true);
    expect(runIdSchema.safeParse("-hello").success).toBe(false);
    expect(runIdSchema.safeParse("a".repeat(201)).success).toBe(false);
    expect(nodePathSchema.safeParse("documentation/workspace/inspect").success).toBe(true);
    expect(nodePathSchema.safeParse("a//b").success).toBe(false);
    expect(opaqueIdSchema.safeParse("msg:run:a/b:1:step").success).toBe(true);
    expect(opaqueIdSchema.safeParse("has space").success).toBe(false);
  });
});
