import { z } from "zod";

/** The effect type under which each isolated agent attempt's session record is saved with its visit. */
export const AGENT_SESSION_EFFECT = "agent.session";

/** One entry of an isolated step's saved transcript; texts are cut to a bound by whoever saves it. */
export const transcriptEntrySchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("user"), text: z.string() }),
  z.object({ role: z.literal("assistant"), text: z.string() }),
  z.object({ role: z.literal("tool_call"), tool: z.string(), arguments: z.string() }),
  z.object({ role: z.literal("tool_result"), tool: z.string(), text: z.string(), isError: z.boolean() }),
]);
export type TranscriptEntry = z.infer<typeof transcriptEntrySchema>;

/**
 * What an isolated agent session cost and said, saved as the result of its `agent.session` effect:
 * `piw status` and the viewer's inspector show it per step and per run.
 */
export const agentSessionReportSchema = z.object({
  /** `"<provider>/<model id>"`, or null when the session never chose one. */
  model: z.string().nullable(),
  tokensIn: z.number().int().min(0),
  tokensOut: z.number().int().min(0),
  /** In the provider's currency units, when the model reports a price; else null. */
  cost: z.number().nullable(),
  durationMs: z.number().min(0),
  /** How many model turns the session ran (its prompt, reminders and retries); absent: not counted. */
  turns: z.number().int().min(0).optional(),
  transcript: z.array(transcriptEntrySchema),
  /** Entries left out at the start to keep the transcript within its bound. */
  transcriptOmitted: z.number().int().min(0),
  /** Set when the session was stopped before the step ended: its deadline passed, it was cancelled or its run's budget ran out. */
  ended: z.enum(["timed_out", "cancelled", "budget_exceeded"]).optional(),
});
export type AgentSessionReport = z.infer<typeof agentSessionReportSchema>;
