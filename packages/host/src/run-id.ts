import { randomBytes } from "node:crypto";

/**
 * A final run ID, `<workflow>-<base36 time>-<8 hex>`. Workflow names already use run-ID characters;
 * anything else is replaced so the ID always matches `runIdSchema`.
 */
export function allocateRunId(workflowName: string, now: number = Date.now()): string {
  let name = workflowName.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 120);
  if (!/^[A-Za-z0-9]/.test(name)) name = `run${name}`;
  return `${name}-${now.toString(36)}-${randomBytes(4).toString("hex")}`;
}
