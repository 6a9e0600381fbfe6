import { compute, decision, decisionEdge, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string };

/** A decision: code picks one of fixed choices, and each choice has its own edge. */
export default defineWorkflow({
  name: "decision",
  input: z.object({ task: z.string() }),
  startAt: "size",
  nodes: {
    size: compute({ run: ({ input }: NodeContext<Input>) => input.task.split(/\s+/).filter(Boolean).length }),
    route: decision({
      choices: ["short", "long"],
      decide: ({ outputs }) => ((outputs.size as number) <= 3 ? "short" : "long"),
    }),
    short: compute({ run: () => "a short task" }),
    long: compute({ run: () => "a long task" }),
  },
  edges: {
    size: { to: "route" },
    route: decisionEdge({ short: "short", long: "long" }),
    short: { to: "done" },
    long: { to: "done" },
  },
});
