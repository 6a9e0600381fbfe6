import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string };

/** Two compute nodes: pure code, each output saved before the next node starts. */
export default defineWorkflow({
  name: "compute",
  input: z.object({ task: z.string() }),
  startAt: "split",
  nodes: {
    split: compute({ run: ({ input }: NodeContext<Input>) => input.task.split(/\s+/).filter(Boolean) }),
    count: compute({
      run: ({ outputs }) => {
        const words = outputs.split as string[];
        return { words: words.length, longest: words.reduce((a, b) => (b.length > a.length ? b : a), "") };
      },
    }),
  },
  edges: { split: { to: "count" }, count: { to: "done" } },
});
