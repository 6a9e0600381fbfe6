import { readFileSync, writeFileSync } from "node:fs";
import { HERDR_PLUGIN, herdrManifest } from "@piw/state-dir";
import { defineConfig } from "tsup";
import { splitBarrels } from "../piw/split-barrel.ts";

// The Herdr plugin's manifest is written from package.json on every build, so its version cannot
// drift from the package's (a changeset version bump changes only package.json).
const { version } = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8")) as {
  version: string;
};
writeFileSync(new URL(HERDR_PLUGIN.manifestFile, import.meta.url), herdrManifest(version));

// The published `piw` package: every process entry and the Pi extension as bundles of this monorepo's
// apps and packages (workspace packages are devDependencies, so tsup inlines them). What stays external
// is what package.json lists: better-sqlite3 (a native addon), zod and jiti (workflow files resolve
// `zod` to the engine's copy, and jiti loads its transform by path), and Pi's packages (peers: a
// second physical copy would break Pi's module mapping).
export default defineConfig({
  entry: {
    extension: "src/extension.ts",
    piw: "src/piw.ts",
    "piw-host": "src/piw-host.ts",
    "piw-worker": "src/piw-worker.ts",
    "piw-preflight": "src/piw-preflight.ts",
    "herdr-pane": "src/herdr-pane.ts",
    index: "src/index.ts",
  },
  // Declarations only for the authoring API: the other entries are programs.
  dts: { entry: { index: "src/index.ts" } },
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node22",
  platform: "node",
  // Each command of the CLI loads only the viewer files it uses (`piw list` never loads Pi's TUI).
  esbuildPlugins: [splitBarrels(["viewer", "protocol", "client"])],
});
