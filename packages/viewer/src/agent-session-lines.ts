import {
  AGENT_SESSION_EFFECT,
  type AgentSessionReport,
  agentSessionReportSchema,
  type HistoryEffect,
  type RunHistory,
} from "@piw/protocol";
import { formatDuration } from "./format.js";

/** Each isolated attempt's saved session record, in order; a record that is still open has none. */
export function agentSessions(
  history: RunHistory,
  path?: string,
): Array<{ effect: HistoryEffect; report: AgentSessionReport | null }> {
  return history.effects
    .filter((e) => e.effectType === AGENT_SESSION_EFFECT && (path === undefined || e.path === path))
    .map((effect) => {
      const parsed = agentSessionReportSchema.safeParse(effect.result);
      return { effect, report: parsed.success ? parsed.data : null };
    });
}

function costWords(cost: number | null): string {
  return cost === null ? "cost not reported" : `cost ${cost.toFixed(4)}`;
}

function usageWords(r: Pick<AgentSessionReport, "tokensIn" | "tokensOut" | "cost">): string {
  return `${r.tokensIn} in / ${r.tokensOut} out tokens, ${costWords(r.cost)}`;
}

/** `piw status`: what each isolated step cost, then the run's total; nothing for a run without any. */
export function agentCostLines(history: RunHistory): string[] {
  const sessions = agentSessions(history);
  if (sessions.length === 0) return [];
  const lines = ["isolated agent sessions"];
  const total = { tokensIn: 0, tokensOut: 0, cost: null as number | null };
  for (const { effect, report } of sessions) {
    const where = `  ${effect.path} #${effect.visit}.${effect.ordinal + 1}`;
    if (report === null) {
      lines.push(
        `${where}  ${effect.status === "reserved" ? "no record (still running, or its worker stopped)" : "failed to start"}`,
      );
      continue;
    }
    lines.push(
      `${where}  ${report.model ?? "no model"}  ${usageWords(report)}  ${formatDuration(report.durationMs)}`,
    );
    total.tokensIn += report.tokensIn;
    total.tokensOut += report.tokensOut;
    if (report.cost !== null) total.cost = (total.cost ?? 0) + report.cost;
  }
  lines.push(`  run total  ${usageWords(total)}`);
  return lines;
}

/** `piw status <run> --step <path>`: the saved transcript of each isolated attempt of the step. */
export function stepTranscriptLines(history: RunHistory, path: string): string[] {
  const sessions = agentSessions(history, path);
  if (sessions.length === 0) return [`${path}: no isolated agent session was saved for this step`];
  const lines: string[] = [];
  for (const { effect, report } of sessions) {
    lines.push(`${path} visit ${effect.visit}, attempt ${effect.ordinal + 1}`);
    if (report === null) {
      lines.push("  (no record: the session did not finish)");
      continue;
    }
    lines.push(
      `  ${report.model ?? "no model"}  ${usageWords(report)}  ${formatDuration(report.durationMs)}`,
    );
    if (report.transcriptOmitted > 0) lines.push(`  … ${report.transcriptOmitted} earlier entries left out`);
    for (const entry of report.transcript) {
      switch (entry.role) {
        case "user":
        case "assistant":
          lines.push(`  ${entry.role}: ${entry.text}`);
          break;
        case "tool_call":
          lines.push(`  → ${entry.tool} ${entry.arguments}`);
          break;
        case "tool_result":
          lines.push(`  ← ${entry.tool}${entry.isError ? " (error)" : ""}: ${entry.text}`);
          break;
        default:
          entry satisfies never;
      }
    }
  }
  return lines;
}
