import { mergeConfig } from "vitest/config";
import { definePackageProject } from "../../vitest.shared.js";

// The renderers pick their glyphs from the terminal's locale; tests that want ASCII ask for it.
export default mergeConfig(definePackageProject(import.meta.dirname), { test: { env: { PIW_ASCII: "0" } } });
