import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { IConfiguration, ICruiseResult } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

/**
 * docs/maintainers/architecture.md's "may import" table and its list of boundary rules, checked
 * against the packages' real imports and against `.dependency-cruiser.cjs`.
 */

const workspaceRoot = resolve(import.meta.dirname, "../../..");
const configPath = join(workspaceRoot, ".dependency-cruiser.cjs");
const depcruiseBin = join(workspaceRoot, "node_modules/.bin/depcruise");
const pagePath = join(workspaceRoot, "docs/maintainers/architecture.md");
const config = createRequire(import.meta.url)(configPath) as IConfiguration;

/** Node's built-in modules, as the table writes them. */
const NODE_BUILTINS = "node:*";
const builtins = new Set(builtinModules);

/** Body rows of the first table after `## <heading>`, as trimmed cells. */
function tableRows(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const section = markdown.slice(start + 1).split(/\n## /)[0] ?? "";
  const lines = section.split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const end = lines.findIndex((line, i) => i > first && !line.startsWith("|"));
  const table = lines.slice(first, end < 0 ? undefined : end);
  return table.slice(2).map((row) =>
    row
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim()),
  );
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
}

/** The "may import" table: package name to the names its row lists. */
function mayImport(markdown: string): Map<string, string[]> {
  const rows = tableRows(markdown, "Packages and who may import what");
  return new Map(rows.map((cells) => [backticked(cells[0] ?? "")[0] ?? "", backticked(cells[2] ?? "")]));
}

/** The boundary rules the page names, in its second table of that section. */
function namedRules(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf("\n## Packages and who may import what\n"));
  const ruleTable = section.slice(section.indexOf("\n| rule "));
  return tableRows(`\n## Rules\n${ruleTable}`, "Rules").map((cells) => backticked(cells[0] ?? "")[0] ?? "");
}

const workspacePackages = readdirSync(join(workspaceRoot, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** What an import specifier names, as the table writes it; null for the package's own files. */
function importedName(specifier: string, own: string): string | null {
  if (specifier.startsWith(".")) return null;
  if (specifier.startsWith("node:") || builtins.has(specifier.split("/")[0] ?? "")) return NODE_BUILTINS;
  const piw = /^@piw\/([^/]+)/.exec(specifier);
  if (piw) return piw[1] === own ? null : (piw[1] ?? null);
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? null);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.(ts|tsx|mts|cts)$/.test(file))
    .map((file) => join(dir, file));
}

/** Every name a package's src/ imports: static, re-exported, side-effect and dynamic imports. */
function realImports(pkg: string): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(join(workspaceRoot, "packages", pkg, "src"))) {
    const code = readFileSync(file, "utf8").replace(/^\s*(\/\/|\*|\/\*).*$/gm, "");
    for (const match of code.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"'\s]+)["']/g)) {
      const name = importedName(match[1] ?? "", pkg);
      if (name !== null) names.add(name);
    }
  }
  return names;
}

/** Imports a package's src/ makes that its row does not list. */
function unlisted(table: Map<string, string[]>): string[] {
  return workspacePackages.flatMap((pkg) => {
    const listed = new Set(table.get(pkg) ?? []);
    return [...realImports(pkg)].filter((name) => !listed.has(name)).map((name) => `${pkg} imports ${name}`);
  });
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/**
 * A tree of one `src/index.ts` per table row that imports exactly what the row lists, cruised with
 * the real config: the violations are the rows the boundary rules forbid.
 */
function cruiseTable(table: Map<string, string[]>): string[] {
  const root = mkdtempSync(join(tmpdir(), "piw-architecture-table-"));
  scratch.push(root);
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        baseUrl: ".",
        paths: { "@piw/*": ["packages/*/src/index.ts"] },
      },
    }),
  );
  for (const [pkg, names] of table) {
    mkdirSync(join(root, "packages", pkg, "src"), { recursive: true });
    const lines = names.map((name) => {
      if (name === NODE_BUILTINS) return `import "node:fs";`;
      return workspacePackages.includes(name) ? `import "@piw/${name}";` : `import "${name}";`;
    });
    writeFileSync(join(root, "packages", pkg, "src", "index.ts"), `${lines.join("\n")}\nexport {};\n`);
  }
  const { PIW_DEPCRUISE_TSCONFIG: _inherited, ...env } = process.env;
  const result = spawnSync(depcruiseBin, ["packages", "--config", configPath, "--output-type", "json"], {
    cwd: root,
    env: { ...env, PIW_DEPCRUISE_TSCONFIG: join(root, "tsconfig.json") },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (!result.stdout.trim()) throw new Error(`depcruise printed no report:\n${result.stderr}`);
  const { summary } = JSON.parse(result.stdout) as ICruiseResult;
  expect(summary.totalCruised).toBeGreaterThanOrEqual(table.size);
  return summary.violations.map((v) => `${v.from} -> ${v.unresolvedTo ?? v.to}: ${v.rule.name}`).sort();
}

describe("docs/maintainers/architecture.md", () => {
  const page = readFileSync(pagePath, "utf8");
  const table = mayImport(page);

  it("has one row in the may-import table for every package, and none for a package that does not exist", () => {
    expect([...table.keys()].sort()).toEqual(workspacePackages);
  });

  it("lists in each package's row every package and module its src/ imports", () => {
    expect(unlisted(table)).toEqual([]);
  });

  it("lists nothing the boundary rules forbid", () => {
    expect(cruiseTable(table)).toEqual([]);
  }, 120_000);

  it("names exactly the boundary rules of .dependency-cruiser.cjs", () => {
    const configured = (config.forbidden ?? []).map((rule) => rule.name ?? "");
    expect([...namedRules(page)].sort()).toEqual([...configured].sort());
  });

  it("catches a missing row, a missing import and a forbidden one (the checker itself)", () => {
    const withoutStore = new Map([...table].filter(([pkg]) => pkg !== "store"));
    expect([...withoutStore.keys()].sort()).not.toEqual(workspacePackages);
    expect(unlisted(withoutStore)).toContain("store imports better-sqlite3");

    const withoutZod = new Map(table);
    withoutZod.set("protocol", []);
    expect(unlisted(withoutZod)).toContain("protocol imports zod");

    const forbidden = new Map(table);
    forbidden.set("viewer", [...(table.get("viewer") ?? []), "store"]);
    expect(cruiseTable(forbidden)).toEqual([
      "packages/viewer/src/index.ts -> @piw/store: store-only-from-host-or-embedded",
    ]);
  }, 120_000);
});
