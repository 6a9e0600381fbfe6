import type { RecoveryReason } from "@piw/protocol";
import { describeConflict } from "@piw/viewer";
import { describeRecovery } from "./render-run.js";

export { describeConflict };

export function describeRecoveryRequired(runId: string, reason: RecoveryReason): string {
  return `run ${runId} must be recovered first: ${describeRecovery(reason)}`;
}
