import type { WorkflowDefinition } from "piw";
import autodoc from "./autodoc.js";
import autoimplement from "./autoimplement.js";
import autoplan from "./autoplan.js";
import sanityCheck from "./sanity-check.js";

/**
 * Every workflow piw ships, in the order lists show them. The worker and the preflight child register
 * each one under its name; a new built-in is its own file here and one line in this list.
 */
export const BUILTIN_WORKFLOWS: readonly WorkflowDefinition[] = [
  sanityCheck,
  autoplan,
  autodoc,
  autoimplement,
];
