import { defineConfig } from "tsup";

// The built-ins import the authoring API as `piw`, like any workflow file. In this package's own build
// that is the engine's public entry (which re-exports it), left external like every dependency, so the
// worker loads one engine; the published package bundles the sources, where `piw` is the same module.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: false,
  clean: true,
  sourcemap: true,
  target: "node22",
  esbuildPlugins: [
    {
      name: "piw-authoring-entry",
      setup(build) {
        build.onResolve({ filter: /^piw$/ }, () => ({ path: "@piw/engine", external: true }));
      },
    },
  ],
});
