import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve, sep } from "node:path";
import type { IConfiguration, ICruiseResult } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const workspaceRoot = resolve(import.meta.dirname, "../../..");
const configPath = join(workspaceRoot, ".dependency-cruiser.cjs");
const depcruiseBin = join(workspaceRoot, "node_modules/.bin/depcruise");
const fixtureRoot = resolve(import.meta.dirname, "../fixtures");

const config = createRequire(import.meta.url)(configPath) as IConfiguration;
const ruleNames = (config.forbidden ?? []).map((rule) => rule.name ?? "(unnamed)");

/** depcruise reports a built-in by its bare name (`node:fs` as `fs`), so compare specifiers without `node:`. */
function specifier(name: string | undefined): string {
  return (name ?? "").replace(/^node:/, "");
}

/** Runs the real depcruise CLI over `packages apps` in `cwd`, as `pnpm boundaries` does. */
function cruise(cwd: string, tsConfig?: string): ICruiseResult {
  const { PIW_DEPCRUISE_TSCONFIG: _inherited, ...env } = process.env;
  const result = spawnSync(
    depcruiseBin,
    ["packages", "apps", "--config", configPath, "--output-type", "json"],
    {
      cwd,
      env: tsConfig === undefined ? env : { ...env, PIW_DEPCRUISE_TSCONFIG: tsConfig },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (result.error) throw result.error;
  // depcruise exits with the number of errors, so only a missing report means it did not run.
  if (!result.stdout.trim()) throw new Error(`depcruise printed no report:\n${result.stderr}`);
  return JSON.parse(result.stdout) as ICruiseResult;
}

/** The fixture's import markers: one `<file> imports <specifier>: <rule>` per marked violation. */
function readMarkers(): { marked: string[]; allowed: string[] } {
  const marked: string[] = [];
  const allowed: string[] = [];
  const files = readdirSync(fixtureRoot, { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".ts"),
  );
  for (const file of files) {
    const from = file.split(sep).join("/");
    for (const line of readFileSync(join(fixtureRoot, file), "utf8").split("\n")) {
      const match = /^import .*"([^"]+)"; \/\/ (violates: (.+)|allowed)/.exec(line);
      if (!match?.[1]) continue;
      const imported = `${from} imports ${specifier(match[1])}`;
      if (match[3] === undefined) allowed.push(imported);
      for (const rule of match[3]?.split(", ") ?? []) marked.push(`${imported}: ${rule}`);
    }
  }
  return { marked: marked.sort(), allowed: allowed.sort() };
}

describe("dependency-cruiser boundary rules", () => {
  it("names every rule, as an error with a comment that says what to do instead", () => {
    expect(ruleNames.length).toBeGreaterThan(0);
    expect(new Set(ruleNames).size).toBe(ruleNames.length);
    for (const rule of config.forbidden ?? []) {
      expect(rule.severity, rule.name).toBe("error");
      expect(rule.comment?.length ?? 0, rule.name).toBeGreaterThan(40);
    }
  });

  it("fires every rule on the fixture tree, exactly on the marked imports", () => {
    const { summary } = cruise(fixtureRoot, join(fixtureRoot, "tsconfig.json"));
    const reported = summary.violations
      .map(
        (violation) =>
          `${violation.from} imports ${specifier(violation.unresolvedTo)}: ${violation.rule.name}`,
      )
      .sort();
    const { marked, allowed } = readMarkers();

    expect([...new Set(summary.violations.map((violation) => violation.rule.name))].sort()).toEqual(
      [...ruleNames].sort(),
    );
    expect(reported).toEqual(marked);
    // The allowed imports are the rules' exceptions (store's own SQLite, the extension's Pi packages...);
    // the equality above already proves none fired, this proves the markers were read.
    expect(allowed.length).toBeGreaterThan(10);
  });

  it("finds no violation in the real packages and apps", () => {
    const { summary, modules } = cruise(workspaceRoot);
    expect(summary.violations).toEqual([]);
    expect(summary.totalCruised).toBeGreaterThan(0);
    // `@piw/x` must reach packages/x/src/index.ts through tsconfig.base.json, or the rules see dist/ or nothing.
    const misresolved = modules.flatMap((module) =>
      module.dependencies
        .filter((dependency) => /^@piw\/[^/]+$/.test(dependency.module))
        .filter((dependency) => !/^packages\/[^/]+\/src\/index\.ts$/.test(dependency.resolved))
        .map((dependency) => `${module.source} imports ${dependency.module} as ${dependency.resolved}`),
    );
    expect(misresolved).toEqual([]);
  });
});
