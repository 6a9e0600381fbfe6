import { z } from "zod";
import { nodePathSchema, runIdSchema } from "./ids.js";

/** The longest text one conversation entry carries; a longer one is cut and says so. */
export const CONVERSATION_TEXT_MAX = 2_000;
/** The longest tool result one entry carries: a tool result is shown, not copied. */
export const CONVERSATION_RESULT_MAX = 500;

/**
 * One message of an agent step's conversation, oldest first: the step prompt, the model's text, a
 * tool call with its arguments, a tool's result (bounded), the model's submit and the verdict on
 * it, and (while the step runs) the latest fact its session reported live.
 */
const conversationEntrySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("prompt"), text: z.string() }),
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("tool_call"), tool: z.string(), arguments: z.string() }),
  z.object({ type: z.literal("tool_result"), tool: z.string(), text: z.string(), isError: z.boolean() }),
  z.object({ type: z.literal("submit"), output: z.string() }),
  z.object({ type: z.literal("verdict"), accepted: z.boolean(), text: z.string() }),
  z.object({ type: z.literal("live"), kind: z.enum(["tool", "submitted"]), text: z.string() }),
]);
export type ConversationEntry = z.infer<typeof conversationEntrySchema>;

/** One visit's attempt of an agent step, and where its messages come from. */
const conversationVisitSchema = z.object({
  visit: z.number().int(),
  attempt: z.number().int(),
  /** `isolated`: a headless Pi session piw ran; `conversation`: turns of the user's Pi session. */
  mode: z.enum(["isolated", "conversation"]),
  /** `open` while the step still runs: more entries may follow. */
  state: z.enum(["open", "settled"]),
  entries: z.array(conversationEntrySchema),
  /** Entries left out at the start to keep the reply bounded. */
  omitted: z.number().int().min(0),
});
export type ConversationVisit = z.infer<typeof conversationVisitSchema>;

/** `runs.conversation`: what the agent said and did in one step, visit by visit. */
export const stepConversationSchema = z.object({
  runId: runIdSchema,
  path: nodePathSchema,
  /** The run's revision when this was read. */
  revision: z.number().int(),
  visits: z.array(conversationVisitSchema),
});
export type StepConversation = z.infer<typeof stepConversationSchema>;
