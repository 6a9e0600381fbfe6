import { messageKindSchema } from "@piw/protocol";
import { z } from "zod";

/** The custom message type of everything piw puts into a Pi session. */
export const PIW_MESSAGE_TYPE = "piw";

/**
 * What piw writes into a custom message's `details`: the host outbox ID proves delivery later; the
 * rest is what its card in the chat shows (the run's workflow and state as they were at delivery).
 */
const piwMessageDetailsSchema = z.object({
  piwMessageId: z.string(),
  runId: z.string(),
  kind: messageKindSchema,
  path: z.string().nullable(),
  visit: z.number().int().nullable().optional(),
  workflow: z.string().optional(),
  state: z.string().optional(),
});
export type PiwMessageDetails = z.infer<typeof piwMessageDetailsSchema>;

/** The outbox ID of a piw message in the session: all that proving a delivery needs. */
export function deliveredId(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { piwMessageId, runId } = value as { piwMessageId?: unknown; runId?: unknown };
  return typeof piwMessageId === "string" && typeof runId === "string" ? piwMessageId : undefined;
}

/** The details of a piw message, or undefined for anything else (another extension's, a damaged one). */
export function piwDetails(value: unknown): PiwMessageDetails | undefined {
  const parsed = piwMessageDetailsSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
