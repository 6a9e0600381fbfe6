import { compute, defineWorkflow, type NodeContext, wait } from "piw";
import { z } from "zod";

type Input = { task: string };

/** A wait node: the run parks on the clock, with nothing running for it, and goes on at its time. */
export default defineWorkflow({
  name: "wait",
  input: z.object({ task: z.string() }),
  startAt: "settle",
  nodes: {
    settle: wait({ ms: 3_000 }),
    finish: compute({ run: ({ input }: NodeContext<Input>) => ({ done: input.task }) }),
  },
  edges: { settle: { to: "finish" }, finish: { to: "done" } },
});
