import { z } from "zod";
import { nodePathSchema, visitNumberSchema } from "./ids.js";

/** The longest text one progress fact carries: a tool call's summary or the submitted output. */
export const AGENT_PROGRESS_TEXT_MAX = 300;

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

/** `text` cut to AGENT_PROGRESS_TEXT_MAX, on one line. */
export function progressText(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, " ");
  return line.length <= AGENT_PROGRESS_TEXT_MAX ? line : `${line.slice(0, AGENT_PROGRESS_TEXT_MAX - 1)}…`;
}
