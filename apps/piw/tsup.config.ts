import { defineConfig } from "tsup";
import { splitBarrels } from "./split-barrel.ts";

// The workspace packages are devDependencies, so they are bundled (and tree-shaken); what stays
// external is what package.json lists, as in the published package.
export default defineConfig({
  entry: ["src/main.ts"],
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node22",
  esbuildPlugins: [splitBarrels(["viewer", "protocol", "client"])],
});
