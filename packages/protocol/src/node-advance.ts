import { z } from "zod";
import { nodeVisitStateSchema } from "./execution.js";
import { finishNodeVisitSchema, startNodeVisitSchema } from "./run-records.js";
import { transitionSchema } from "./transition.js";

/**
 * Finish a visit and open the visit its result leads to, in one store transaction: one commit and one
 * round trip per node boundary instead of two. Only along the saved edge: the finished visit's `next`
 * (where it succeeded into, or where an outcome route took its failure) must be the started path.
 */
export const advanceNodeVisitSchema = z
  .object({ finish: finishNodeVisitSchema, start: startNodeVisitSchema })
  .refine((req) => req.finish.result.next === req.start.path, {
    message: "advance starts the node the finished visit leads to",
  });
export type AdvanceNodeVisit = z.infer<typeof advanceNodeVisitSchema>;

/**
 * The finished visit, and the start's own transition: a start can still be refused (a pause parks the run
 * there) after the finish was saved. When the finish itself is refused, nothing is saved and the whole
 * advance carries that refusal instead.
 */
export const nodeVisitAdvanceSchema = z.object({
  finished: nodeVisitStateSchema,
  started: transitionSchema(nodeVisitStateSchema),
});
export type NodeVisitAdvance = z.infer<typeof nodeVisitAdvanceSchema>;
