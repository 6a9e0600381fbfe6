import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findAppEntry, HOST_ENTRY, PREFLIGHT_ENTRY } from "../src/index.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const OWNER = "packages/state-dir/src/app-entry.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-app-entry-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A caller file in `<dir>/caller/dist/`, whose app dependency lives in `<dir>/app` when `app` is set. */
function caller(app: boolean) {
  mkdirSync(join(dir, "caller", "dist"), { recursive: true });
  const url = pathToFileURL(join(dir, "caller", "dist", "main.js")).href;
  const resolve = (specifier: string) => {
    if (!app) throw new Error(`Cannot find package '${specifier}'`);
    return pathToFileURL(join(dir, "app", "package.json")).href;
  };
  return { url, resolve };
}

describe("findAppEntry", () => {
  it("takes the bundled sibling of the caller first", () => {
    const from = caller(true);
    writeFileSync(join(dir, "caller", "dist", "piw-host.js"), "");
    expect(findAppEntry(HOST_ENTRY, from)).toEqual({
      kind: "found",
      path: join(dir, "caller", "dist", "piw-host.js"),
    });
  });

  it("else the workspace app's built file, and says when it is not built", () => {
    const from = caller(true);
    mkdirSync(join(dir, "app", "dist"), { recursive: true });
    expect(findAppEntry(PREFLIGHT_ENTRY, from)).toEqual({
      kind: "not_built",
      path: join(dir, "app", "dist", "preflight.js"),
    });
    writeFileSync(join(dir, "app", "dist", "preflight.js"), "");
    expect(findAppEntry(PREFLIGHT_ENTRY, from)).toEqual({
      kind: "found",
      path: join(dir, "app", "dist", "preflight.js"),
    });
  });

  it("names the app when there is neither", () => {
    expect(findAppEntry(HOST_ENTRY, caller(false))).toEqual({ kind: "app_missing", app: "@piw/app-host" });
  });
});

function sourceFiles(root: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(root, entry.name);
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

/** Finding an entry by hand: a `piw-*.js` sibling URL, or an app's manifest through the resolver. */
const RESOLVES_AN_ENTRY =
  /new URL\(\s*["'`]\.\/(piw-|\$\{)|resolve\(\s*["'`]@piw\/app-[a-z-]+\/package\.json|\/package\.json`/;

describe("one entry resolver", () => {
  it("finds the resolution where it is owned, so the scan can see it", () => {
    expect(RESOLVES_AN_ENTRY.test(readFileSync(join(REPO, OWNER), "utf8"))).toBe(true);
  });

  it("has no other src file that finds a process entry by hand: they call findAppEntry", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    const others = files.filter(
      (file) => file !== OWNER && RESOLVES_AN_ENTRY.test(readFileSync(join(REPO, file), "utf8")),
    );
    expect(others).toEqual([]);
  });
});
