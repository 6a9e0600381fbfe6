import { readdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { defineConfig, type ViteUserConfig } from "vitest/config";

const workspaceRoot = import.meta.dirname;

/** Resolve `@piw/<name>` (and `piw`) to its source entry, so tests never depend on a prior build. */
function sourceAliases(): Record<string, string> {
  const packagesDir = join(workspaceRoot, "packages");
  const aliases: Record<string, string> = {};
  for (const name of readdirSync(packagesDir)) {
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
