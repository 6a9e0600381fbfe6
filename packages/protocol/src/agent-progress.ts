import { z } from "zod";
import { nodePathSchema, visitNumberSchema } from "./ids.js";
import { boundSafeMessage } from "./safe-error.js";

/** The longest text one progress fact carries: a tool call's summary or the submitted output. */
const AGENT_PROGRESS_TEXT_MAX = 300;

/** The most open agent visits one run view names in `agentActivity`; the host keeps no more. */
export const AGENT_ACTIVITY_MAX = 32;

/**
 * What an isolated agent step is doing now, as its worker tells the host: its latest tool call
 * (the tool's name and a secret-free summary, such as the path a `read` reads) or its accepted
 * output. The host keeps the latest per worker and shows it in the run view's current work, so
 * every view can show it; it is live only, never saved. `seq` grows with each fact of the attempt,
 * so a reader can tell a new one from one it has seen.
 */
export const agentProgressSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  attempt: z.number().int().min(1),
  seq: z.number().int().min(1),
  /** How many tools the attempt has called so far (a fact may stand for several under rate limits). */
  toolCalls: z.number().int().min(0),
  kind: z.enum(["tool", "submitted"]),
  text: z.string().max(AGENT_PROGRESS_TEXT_MAX),
});
export type AgentProgress = z.infer<typeof agentProgressSchema>;

/** `text` on one line, cut to AGENT_PROGRESS_TEXT_MAX (UTF-8 bytes, so characters too). */
export function progressText(text: string): string {
  return boundSafeMessage(text, AGENT_PROGRESS_TEXT_MAX);
}
