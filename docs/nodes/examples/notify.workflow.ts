import { compute, defineWorkflow, type NodeContext, notify } from "piw";
import { z } from "zod";

type Input = { task: string };

/** A notify node: a message for the run's Pi session, sent once, without waiting for anyone. */
export default defineWorkflow({
  name: "notify",
  input: z.object({ task: z.string() }),
  startAt: "build",
  nodes: {
    build: compute({ run: ({ input }: NodeContext<Input>) => ({ version: input.task }) }),
    tell: notify({ message: ({ outputs }) => `Built ${(outputs.build as { version: string }).version}.` }),
    finish: compute({ run: ({ outputs }) => outputs.build }),
  },
  edges: { build: { to: "tell" }, tell: { to: "finish" }, finish: { to: "done" } },
});
