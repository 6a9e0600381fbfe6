import { compute, defineWorkflow, type NodeContext, parallel, shell } from "piw";
import { z } from "zod";

type Input = { task: string };

/** A branch of its own: two nodes that count the task's words. */
const count = defineWorkflow({
  name: "count",
  input: z.object({ task: z.string() }),
  startAt: "split",
  nodes: {
    split: compute({ run: ({ input }: NodeContext<Input>) => input.task.split(/\s+/).filter(Boolean) }),
    tally: compute({ run: ({ outputs }) => (outputs.split as string[]).length }),
  },
  edges: { split: { to: "tally" }, tally: { to: "done" } },
});

/** A parallel node: three branches side by side, joined when all three are done, routed on the join. */
export default defineWorkflow({
  name: "parallel",
  input: z.object({ task: z.string() }),
  startAt: "checks",
  nodes: {
    checks: parallel({
      title: "Three checks at once",
      branches: {
        shout: shell({
          exec: ({ input }: NodeContext<Input>) => ["printf", "%s", input.task],
          parse: ({ stdout }) => stdout.toUpperCase(),
        }),
        words: count,
        letters: compute({ run: ({ input }: NodeContext<Input>) => input.task.replace(/\s/g, "").length }),
      },
      join: "all",
      concurrency: 2,
    }),
    report: compute({ run: ({ outputs }) => outputs.checks }),
    tooLong: compute({ run: () => "too long to check" }),
  },
  edges: {
    checks: { to: ["report", "tooLong"], route: (joined) => (joined.letters > 40 ? "tooLong" : "report") },
    report: { to: "done" },
    tooLong: { to: "done" },
  },
});
