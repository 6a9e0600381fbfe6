import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PIW_ENV } from "../src/index.js";

// Facts that have one owner module (docs/maintainers/architecture.md, "One owner for each fact"): each
// scan finds the fact's spelling in its owner, so it can see it, and in no other src file.

const REPO = join(import.meta.dirname, "..", "..", "..");

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

/**
 * Every src/ file of every package and app, as repo-relative paths. Not the test kit's: it is test code,
 * which sets `PIW_*` variables and Pi's folder the way a user's shell does.
 */
function allSourceFiles(): string[] {
  const files: string[] = [];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(REPO, group))) {
      if (group === "packages" && name === "test-kit") continue;
      try {
        files.push(...sourceFiles(join(REPO, group, name, "src")));
      } catch {
        // A folder without src/ has no source to check.
      }
    }
  }
  return files.map((file) => relative(REPO, file));
}

const read = (file: string) => readFileSync(join(REPO, file), "utf8");

/** The code of a file without its comments (roughly: enough for names in code). */
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");

/** A `PIW_*` variable named in code: as a string, a property (`env.PIW_X`) or an object key (`PIW_X:`). */
const NAMED_IN_CODE =
  /["'`]PIW_[A-Z0-9_]*[A-Z0-9]["'`]|\.PIW_[A-Z0-9_]*[A-Z0-9]\b|\bPIW_[A-Z0-9_]*[A-Z0-9]\s*:(?!:)/;
/** Making text one line: a regex replace of whitespace runs, or of U+2028/U+2029 line breaks, by a space. */
const FLATTENS = /\.replace\(\/\[?\\s[^/]*\/gu?, " "\)|\\u2028/;
/** Cutting with an ellipsis: a `.slice(0, …)` right before `…`, or an ELLIPSIS constant. */
const CUTS = /\.slice\(0, [^)]*\)\}?\$?\{?(ELLIPSIS\}?|…)|\bELLIPSIS\b/;

interface OwnedFact {
  fact: string;
  owners: readonly string[];
  spells: (text: string) => boolean;
}

const FACTS: readonly OwnedFact[] = [
  {
    fact: "Pi's agent folder (~/.pi/agent)",
    // The folder as Pi computes it, and as help texts name it (the PIW_HOME entry of the variable table).
    owners: ["packages/state-dir/src/agent-dir.ts", "packages/state-dir/src/piw-env.ts"],
    spells: (text) => /\.pi[/\\]agent/.test(text) || /["'`]\.pi["'`]\s*,\s*["'`]agent["'`]/.test(text),
  },
  {
    fact: "a PIW_* variable's name in code",
    owners: ["packages/state-dir/src/piw-env.ts"],
    spells: (text) => NAMED_IN_CODE.test(withoutComments(text)),
  },
  {
    fact: "where a process entry is (bundled sibling, else the workspace app)",
    owners: ["packages/state-dir/src/app-entry.ts"],
    spells: (text) =>
      /new URL\(\s*["'`]\.\/(piw-|\$\{)|resolve\(\s*["'`]@piw\/app-[a-z-]+\/package\.json|\/package\.json`/.test(
        text,
      ),
  },
  {
    fact: "the ID patterns",
    owners: ["packages/protocol/src/id-patterns.ts"],
    spells: (text) =>
      ["[A-Za-z0-9][A-Za-z0-9._-]", "[A-Za-z0-9_-]+(\\/[A-Za-z0-9_-]+)", "[\\x21-\\x7e]"].some((spelling) =>
        text.includes(spelling),
      ),
  },
  {
    fact: "one line, cut with an ellipsis",
    owners: ["packages/protocol/src/one-line.ts"],
    spells: (text) => FLATTENS.test(text) && CUTS.test(text),
  },
  {
    fact: "a day in milliseconds, and the 7-day limit of a node's wait and a schedule's window",
    owners: ["packages/protocol/src/durations.ts"],
    spells: (text) =>
      /\b24\s*\*\s*60\s*\*\s*60|\b86_?400_?000\b|\b7\s*\*\s*(24\b|DAY_MS)|\b604_?800(_?000)?\b/.test(text),
  },
];

describe("one owner for each fact", () => {
  const files = allSourceFiles();

  it("reads the whole tree", () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it.each(FACTS)("$fact: spelled in its owner, so the scan can see it", ({ owners, spells }) => {
    expect(owners.filter((owner) => spells(read(owner)))).toEqual(owners);
  });

  it.each(FACTS)("$fact: spelled in no other src file", ({ owners, spells }) => {
    expect(files.filter((file) => !owners.includes(file) && spells(read(file)))).toEqual([]);
  });

  it("mentions no PIW_* variable anywhere in src (comments and messages too) that the table lacks", () => {
    const known = new Set<string>(Object.values(PIW_ENV).map((variable) => variable.name));
    // Code identifiers that look like variable names but are not variables.
    const notVariables = new Set(["PIW_ENV", "PIW_MESSAGE_TYPE"]);
    const unknown = files.flatMap((file) =>
      [...read(file).matchAll(/\bPIW_[A-Z0-9_]*[A-Z0-9]\b/g)]
        .map(([name]) => name)
        .filter((name) => !known.has(name) && !notVariables.has(name))
        .map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
