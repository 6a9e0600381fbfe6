import { definePackageProject } from "../../vitest.shared.js";

export default definePackageProject(import.meta.dirname);
