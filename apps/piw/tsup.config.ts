import { defineConfig } from "tsup";
import { splitBarrels } from "./split-barrel.ts";

// The workspace packages are devDependencies, so they are bundled (and tree-shaken); what stays
// external is what package.json lists, as in the published package, except zod: inlined, it is one
// module to load instead of a hundred, a part of every command's start (no workflow file is loaded in
// this process, so nothing needs its schemas to be the worker's zod instance).
export default defineConfig({
  entry: ["src/main.ts"],
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node22",
  noExternal: ["zod"],
  esbuildPlugins: [splitBarrels(["viewer"])],
});
