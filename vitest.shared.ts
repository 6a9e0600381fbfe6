import { existsSync, readdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { defineConfig, type ViteUserConfig } from "vitest/config";

const workspaceRoot = import.meta.dirname;

/**
 * Resolve `@piw/<name>` (and `piw`, the authoring API) to its source entry, and `@piw/<name>/testing`
 * (and the engine's `/launcher`) to theirs where the package has them, so tests never depend on a prior
 * build. The subpath comes first: the first alias that matches wins, and `@piw/<name>` also matches
 * `@piw/<name>/testing`.
 */
function sourceAliases(): Record<string, string> {
  const packagesDir = join(workspaceRoot, "packages");
  const aliases: Record<string, string> = {};
  for (const name of readdirSync(packagesDir)) {
    for (const entry of ["testing", "launcher"]) {
      const file = join(packagesDir, name, "src", `${entry}.ts`);
      if (existsSync(file)) aliases[`@piw/${name}/${entry}`] = file;
    }
    aliases[`@piw/${name}`] = join(packagesDir, name, "src", "index.ts");
  }
  // The authoring API as workflow files (and the built-ins) import it.
  aliases.piw = join(packagesDir, "engine", "src", "authoring", "index.ts");
  return aliases;
}

/** The one vitest setup every package and app shares; `dir` is the project's folder. */
export function definePackageProject(dir: string): ViteUserConfig {
  const projectRoot = resolve(dir);
  return defineConfig({
    resolve: { alias: sourceAliases() },
    test: {
      name: `${basename(resolve(projectRoot, ".."))}/${basename(projectRoot)}`,
      root: projectRoot,
      include: ["test/**/*.test.ts"],
      // Type tests (`*.test-d.ts`): tsc checks them, and an `expectTypeOf` or `@ts-expect-error` that
      // does not hold fails the run like any failed test.
      typecheck: {
        enabled: true,
        include: ["test/**/*.test-d.ts"],
        tsconfig: join(workspaceRoot, "tsconfig.type-tests.json"),
      },
      pool: "forks",
      // Node itself runs the engine's `import()` of workflow files, as in production, so its module
      // hooks (`piw`, `zod`, per-load URLs) see them; vitest's own module graph knows nothing of them.
      server: { deps: { external: [/\/packages\/engine\/src\/loader\/node-import\.ts$/] } },
      testTimeout: 30_000,
    },
  });
}
