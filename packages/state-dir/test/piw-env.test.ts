import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PIW_ENV, readPiwEnv } from "../src/index.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const TABLE = "packages/state-dir/src/piw-env.ts";
/** Code identifiers that look like variable names but are not variables. */
const NOT_VARIABLES = new Set(["PIW_ENV", "PIW_MESSAGE_TYPE"]);

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

/** The code of a file without its comments (roughly: enough for names in code). */
function code(file: string): string {
  return readFileSync(join(REPO, file), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:])\/\/.*$/gm, "$1");
}

/** A variable named in code: as a string (`"PIW_X"`), a property (`env.PIW_X`) or an object key (`PIW_X:`). */
const NAMED_IN_CODE =
  /["'`]PIW_[A-Z0-9_]*[A-Z0-9]["'`]|\.PIW_[A-Z0-9_]*[A-Z0-9]\b|\bPIW_[A-Z0-9_]*[A-Z0-9]\s*:(?!:)/g;

describe("readPiwEnv", () => {
  it("reads unset and empty alike, and parses a JSON argv", () => {
    expect(readPiwEnv({}, PIW_ENV.hostCommand)).toEqual({ kind: "unset" });
    expect(readPiwEnv({ PIW_HOST_COMMAND: "" }, PIW_ENV.hostCommand)).toEqual({ kind: "unset" });
    expect(readPiwEnv({ PIW_HOST_COMMAND: '["node","/h.js"]' }, PIW_ENV.hostCommand)).toEqual({
      kind: "set",
      value: ["node", "/h.js"],
    });
  });

  it.each(["not json", "[]", '["node", ""]', '"/secret/host.js"', "[1]", '{"0":"node"}'])(
    "refuses %j as an argv, naming the variable and never the value",
    (value) => {
      const read = readPiwEnv({ PIW_WORKER_COMMAND: value }, PIW_ENV.workerCommand);
      expect(read.kind).toBe("invalid");
      const message = read.kind === "invalid" ? read.message : "";
      expect(message).toMatch(/^PIW_WORKER_COMMAND must be a JSON array/);
      if (value.length > 2) expect(message).not.toContain(value);
    },
  );

  it("checks words and numbers", () => {
    expect(readPiwEnv({ PIW_SYNCHRONOUS: "NORMAL" }, PIW_ENV.synchronous)).toEqual({
      kind: "set",
      value: "NORMAL",
    });
    expect(readPiwEnv({ PIW_SYNCHRONOUS: "OFF" }, PIW_ENV.synchronous)).toEqual({
      kind: "invalid",
      message: "PIW_SYNCHRONOUS must be FULL or NORMAL",
    });
    expect(readPiwEnv({ PIW_PREFLIGHT_TIMEOUT_MS: "600001" }, PIW_ENV.preflightTimeoutMs).kind).toBe(
      "invalid",
    );
    expect(readPiwEnv({ PIW_PREFLIGHT_TIMEOUT_MS: "25" }, PIW_ENV.preflightTimeoutMs)).toEqual({
      kind: "set",
      value: 25,
    });
  });

  it("names each variable once, under a name that matches its key's spelling", () => {
    const names = Object.values(PIW_ENV).map((variable) => variable.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe("one table of PIW_* variables", () => {
  it("finds the names in the table, so the scan can see them", () => {
    const named = code(TABLE).match(NAMED_IN_CODE) ?? [];
    expect(named.length).toBeGreaterThanOrEqual(Object.keys(PIW_ENV).length);
  });

  it("has no src file outside the table that names a variable in code: they use PIW_ENV", () => {
    const files = allSourceFiles();
    expect(files.length).toBeGreaterThan(50);
    const others = files
      .filter((file) => file !== TABLE)
      .flatMap((file) => (code(file).match(NAMED_IN_CODE) ?? []).map((hit) => `${file}: ${hit}`));
    expect(others).toEqual([]);
  });

  it("mentions no PIW_* variable anywhere in src (comments and messages too) that the table lacks", () => {
    const known = new Set<string>(Object.values(PIW_ENV).map((variable) => variable.name));
    const unknown = allSourceFiles().flatMap((file) =>
      [...readFileSync(join(REPO, file), "utf8").matchAll(/\bPIW_[A-Z0-9_]*[A-Z0-9]\b/g)]
        .map(([name]) => name)
        .filter((name) => !known.has(name) && !NOT_VARIABLES.has(name))
        .map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
