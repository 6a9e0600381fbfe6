import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { name: string };

/** The child that include.workflow.ts mounts: it leaves through its exit `greeted`. */
export default defineWorkflow({
  name: "include-child",
  input: z.object({ name: z.string() }),
  startAt: "greet",
  exits: ["greeted"],
  nodes: {
    greet: compute({ run: ({ input }: NodeContext<Input>) => `hello, ${input.name}` }),
  },
  edges: { greet: { to: "greeted" } },
});
