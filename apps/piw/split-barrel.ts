import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Plugin } from "esbuild";

/**
 * esbuild puts a file in every chunk whose entry reaches it through any import, and a package's
 * index re-exports all of its files: so `piw list`, which takes two time formats from @piw/viewer,
 * would load the viewer's TUI app and Pi's TUI library (150 ms) with them. This plugin gives each
 * importer of the named packages its own index that re-exports only the names it imports, from the
 * files that define them, so each command's chunk reaches only the files it uses. It reads the
 * package's real index, so it follows the package as it changes; a name missing from it fails the
 * build the way a wrong import would.
 */
export function splitBarrels(packages: readonly string[]): Plugin {
  const repo = join(import.meta.dirname, "..", "..");
  const pattern = new RegExp(`^@piw/(${packages.join("|")})$`);
  return {
    name: "split-barrels",
    setup(build) {
      build.onResolve({ filter: pattern }, (args) =>
        args.importer === ""
          ? undefined
          : { path: `${args.path}?from=${args.importer}`, namespace: "split-barrel" },
      );
      build.onLoad({ filter: /.*/, namespace: "split-barrel" }, (args) => {
        const [specifier = "", importer = ""] = args.path.split("?from=");
        const index = join(repo, "packages", specifier.slice("@piw/".length), "src", "index.ts");
        const sources = exportSources(index, join(repo, "packages"));
        const names = importedNames(importer, specifier);
        // A namespace, default, bare or dynamic import takes the whole index; a name the index does not
        // re-export is left to the index itself, where the build reports it.
        const lines =
          names === "all"
            ? [`export * from ${JSON.stringify(index)};`]
            : names.map((name) => `export { ${name} } from ${JSON.stringify(sources.get(name) ?? index)};`);
        return { contents: lines.join("\n"), loader: "ts", resolveDir: dirname(index) };
      });
    },
  };
}

/** `name -> absolute file` for every value an index re-exports with `export { … } from "./x.js"`. */
function exportSources(index: string, packagesDir: string): Map<string, string> {
  const text = readFileSync(index, "utf8");
  if (/export\s*\*/.test(text)) throw new Error(`${index}: export * cannot be split by name`);
  const sources = new Map<string, string>();
  for (const match of text.matchAll(/export\s*(type\s*)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
    if (match[1] !== undefined) continue;
    const from = match[3] ?? "";
    // A re-export from another package goes to that package's real index.
    const file = from.startsWith(".")
      ? resolve(dirname(index), from.replace(/\.js$/, ".ts"))
      : from.replace(/^@piw\/(.+)$/, (_, name: string) => join(packagesDir, name, "src", "index.ts"));
    for (const name of valueNames(match[2] ?? "")) sources.set(name, file);
  }
  return sources;
}

/**
 * The value names `importer` takes from `specifier` (its `import { … }` and `export { … } from`), or
 * "all" when it takes the package some other way.
 */
function importedNames(importer: string, specifier: string): string[] | "all" {
  const text = readFileSync(importer, "utf8");
  const names = new Set<string>();
  const from = specifier.replace("/", "\\/");
  const whole = new RegExp(`(import\\s*(\\*|(?!type\\b)\\w+)[^;]*?from|import\\s*\\(?)\\s*["']${from}["']`);
  if (whole.test(text)) return "all";
  const statements = new RegExp(
    `(import|export)\\s*(type\\s*)?\\{([^}]*)\\}\\s*from\\s*["']${from}["']`,
    "g",
  );
  for (const match of text.matchAll(statements)) {
    if (match[2] !== undefined) continue;
    for (const name of valueNames(match[3] ?? "")) names.add(name);
  }
  return [...names];
}

/** `a, type B, c as d` -> [a, c]: the imported names, without type-only ones. */
function valueNames(list: string): string[] {
  return list
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "" && !part.startsWith("type "))
    .map((part) => part.split(/\s+as\s+/)[0] ?? part);
}
