/**
 * Every kind of graph node, in one zod-free place: the run records' schema and the quick routes'
 * checks (which must not load zod) both read it.
 */
export const NODE_KINDS = [
  "agent",
  "compute",
  "action",
  "shell",
  "notify",
  "checkpoint",
  "decision",
  "wait",
  "parallel",
  "map",
] as const;
