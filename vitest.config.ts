import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      "apps/*/vitest.config.ts",
      "tools/*/vitest.config.ts",
      "tests/*/vitest.config.ts",
    ],
    reporters: ["default", ["json", { outputFile: ".reports/vitest.json" }]],
  },
});
