import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { codePointLength, oneLine } from "../src/index.js";
import { oneLineSchema } from "../src/one-line.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const OWNER = "packages/protocol/src/one-line.ts";

describe("oneLine", () => {
  it("makes every run of whitespace and control characters one space and trims the ends", () => {
    expect(oneLine("  reading\nfile\t2 \u2028 of\u0000 3  ", 100)).toBe("reading file 2 of 3");
    expect(oneLine(" \n\t ", 10)).toBe("");
  });

  it("keeps a line of exactly the limit and cuts a longer one to the limit, the ellipsis included", () => {
    expect(oneLine("abc", 3)).toBe("abc");
    expect(oneLine("abcd", 3)).toBe("ab…");
    expect(oneLine("abcd", 1)).toBe("…");
  });

  it("counts code points: astral characters are one each and never split", () => {
    const line = oneLine("😀".repeat(10), 5);
    expect(line).toBe("😀😀😀😀…");
    expect(line).not.toMatch(/\p{Cs}/u);
    expect(oneLine("𝒜𝒜𝒜", 3)).toBe("𝒜𝒜𝒜");
    expect(codePointLength("a😀𝒜")).toBe(3);
    // A family emoji is several code points joined: each counts, and the cut still lands between two.
    const family = "👨‍👩‍👧";
    expect(oneLine(family.repeat(4), 6)).not.toMatch(/\p{Cs}/u);
  });

  it("agrees with its schema: what it returns, the schema accepts", () => {
    for (const text of ["x".repeat(500), "😀".repeat(500), `a\n${"𝒜".repeat(300)}`]) {
      expect(oneLineSchema(200).safeParse(oneLine(text, 200)).success).toBe(true);
    }
    expect(oneLineSchema(3).safeParse("😀😀😀😀").success).toBe(false);
  });
});

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

/** Making text one line: a regex replace of whitespace runs or of U+2028/U+2029 line breaks by a space. */
const FLATTENS = /\.replace\(\/\[?\\s[^/]*\/gu?, " "\)|\\u2028/;
/** Cutting with an ellipsis: a `.slice(0, …)` right before `…`, or an ELLIPSIS constant. */
const CUTS = /\.slice\(0, [^)]*\)\}?\$?\{?(ELLIPSIS\}?|…)|\bELLIPSIS\b/;

const copies = (file: string) => {
  const text = readFileSync(join(REPO, file), "utf8");
  return FLATTENS.test(text) && CUTS.test(text);
};

describe("one owner of 'one line, cut with an ellipsis'", () => {
  it("finds the rule where it is owned, so the scan can see it", () => {
    expect(copies(OWNER)).toBe(true);
  });

  it("has no other src file that both flattens text to one line and cuts it: they call oneLine", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => file !== OWNER && copies(file))).toEqual([]);
  });
});
