import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/extension.ts"],
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node22",
});
