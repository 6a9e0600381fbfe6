import { type EndTurn, modelFailureOf } from "@piw/protocol";

/**
 * How an agent run ended, from the last assistant message Pi reports at `agent_end`. A provider
 * error that no retry heals (credentials, an unknown model, a spent quota) is told apart, so the
 * step fails instead of being prompted again; the provider's text itself is not sent.
 */
export function turnEndReason(messages: readonly unknown[]): EndTurn["reason"] {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i] as
      | { role?: unknown; stopReason?: unknown; errorMessage?: unknown }
      | undefined;
    if (message?.role !== "assistant") continue;
    if (message.stopReason === "aborted") return "aborted";
    if (message.stopReason !== "error") return "completed";
    const text = typeof message.errorMessage === "string" ? message.errorMessage : "";
    return modelFailureOf(text) === null ? "error" : "model_unavailable";
  }
  return "completed";
}

/** Tokens (in and out) and dollars of one assistant reply, as its provider reported them; else null. */
export function replyUsage(message: unknown): { tokens: number; usd: number } | null {
  const m = message as {
    role?: unknown;
    usage?: { input?: unknown; output?: unknown; cost?: { total?: unknown } };
  } | null;
  if (m?.role !== "assistant" || !m.usage) return null;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  return { tokens: Math.round(num(m.usage.input) + num(m.usage.output)), usd: num(m.usage.cost?.total) };
}
