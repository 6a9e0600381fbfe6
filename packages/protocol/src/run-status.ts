import { z } from "zod";
import { RUN_STATUSES, TERMINAL_OUTCOMES } from "./status-sets.js";

/** A run status on the wire (the status-table rule; the statuses themselves are in status-sets.ts). */
export const runStatusSchema = z.enum(RUN_STATUSES);

/** How a terminal run ended, on the wire. */
export const terminalOutcomeSchema = z.enum(TERMINAL_OUTCOMES);

/** The command that created a run row. `resume` never creates a row: it reuses one. */
export const runOriginCommandSchema = z.enum(["start", "continue", "restart"]);

/**
 * Where a run was started from: a Pi session (which it reserves), the CLI, or a schedule's firing
 * (which names the schedule and the time it fired for; such runs belong to the user, not a session).
 */
export const runOriginSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("pi"), sessionId: z.string().min(1).max(200) }),
  z.object({ kind: z.literal("cli") }),
  z.object({
    kind: z.literal("schedule"),
    scheduleId: z.string().min(1).max(64),
    scheduledFor: z.number().int(),
  }),
]);
export type RunOrigin = z.infer<typeof runOriginSchema>;
