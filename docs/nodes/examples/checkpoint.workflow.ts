import { checkpoint, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string };

/** A checkpoint: the run waits for a person's answer; the answer's continuation goes on from there. */
export default defineWorkflow({
  name: "checkpoint",
  input: z.object({ task: z.string() }),
  startAt: "ask",
  nodes: {
    ask: checkpoint({
      prompt: ({ input }: NodeContext<Input>) => `Ship ${input.task}?`,
      answer: z.object({ ship: z.boolean(), note: z.string().optional() }),
    }),
    result: compute({
      run: ({ input, outputs }: NodeContext<Input>) =>
        (outputs.ask as { ship: boolean }).ship ? `shipped ${input.task}` : `held ${input.task}`,
    }),
  },
  edges: { ask: { to: "result" }, result: { to: "done" } },
});
