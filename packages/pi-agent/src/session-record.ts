import type { IsolatedAgentReport } from "@piw/engine";
import { piMessageTranscript } from "@piw/protocol";

/** The most entries a saved transcript keeps: the last ones, the ones that led to the outcome. */
const TRANSCRIPT_ENTRIES_MAX = 60;

/** The bounded transcript of a session's messages: the last TRANSCRIPT_ENTRIES_MAX entries. */
export function boundedTranscript(
  messages: readonly unknown[],
): Pick<IsolatedAgentReport, "transcript" | "transcriptOmitted"> {
  const all = messages.flatMap(piMessageTranscript);
  const omitted = Math.max(0, all.length - TRANSCRIPT_ENTRIES_MAX);
  return { transcript: all.slice(omitted), transcriptOmitted: omitted };
}

/** Tokens and cost summed over the session's model replies. */
export function usageOf(
  messages: readonly unknown[],
): Pick<IsolatedAgentReport, "tokensIn" | "tokensOut" | "cost"> {
  let tokensIn = 0;
  let tokensOut = 0;
  let cost = 0;
  let priced = false;
  for (const message of messages) {
    const m = message as {
      role?: unknown;
      usage?: { input?: unknown; output?: unknown; cost?: { total?: unknown } };
    };
    if (m?.role !== "assistant" || !m.usage) continue;
    if (typeof m.usage.input === "number") tokensIn += m.usage.input;
    if (typeof m.usage.output === "number") tokensOut += m.usage.output;
    const total = m.usage.cost?.total;
    if (typeof total === "number" && total > 0) {
      cost += total;
      priced = true;
    }
  }
  // A model with no price in its catalog entry reports 0: say "not reported", not "free".
  return { tokensIn, tokensOut, cost: priced ? cost : null };
}

/** The arguments a tool call's summary may show: where it looks, never what it writes or runs. */
const SUMMARY_ARGUMENTS = ["path", "pattern"] as const;
/** The longest argument a summary shows. */
const SUMMARY_ARGUMENT_MAX = 120;

/**
 * A tool call in one line for live progress: the tool's name and, for the arguments that say where
 * it looks (a path, a search pattern), their values, cut. Contents, commands and anything else a
 * call carries are left out, so no secret a model passes to a tool shows.
 */
export function toolCallSummary(tool: string, args: unknown): string {
  const shown: string[] = [];
  if (typeof args === "object" && args !== null) {
    for (const key of SUMMARY_ARGUMENTS) {
      const value = (args as Record<string, unknown>)[key];
      if (typeof value !== "string" || value === "") continue;
      shown.push(value.length <= SUMMARY_ARGUMENT_MAX ? value : `${value.slice(0, SUMMARY_ARGUMENT_MAX)}…`);
    }
  }
  return [tool.slice(0, 64), ...shown].join(" ");
}
