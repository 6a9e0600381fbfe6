import { compute, defineWorkflow, type NodeContext, shell } from "piw";
import { z } from "zod";

type Input = { task: string };

/** The smallest useful workflow: a pure step, then a command whose output becomes the result. */
export default defineWorkflow({
  name: "hello",
  title: "Say hello",
  input: z.object({ task: z.string().min(1) }),
  startAt: "greet",
  nodes: {
    greet: compute({ run: ({ input }: NodeContext<Input>) => `hello from piw: ${input.task}` }),
    echo: shell({
      exec: ({ outputs }) => ["echo", String(outputs.greet)],
      parse: ({ stdout }) => ({ said: stdout }),
      timeoutMs: 10_000,
    }),
  },
  edges: { greet: { to: "echo" }, echo: { to: "done" } },
});
