import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string };

/** One agent step: the model in the run's Pi session sorts an issue and submits a checked result. */
export default defineWorkflow({
  name: "agent",
  input: z.object({ task: z.string().min(1) }),
  startAt: "classify",
  nodes: {
    classify: agent({
      prompt: ({ input }: NodeContext<Input>) => `Classify this issue:\n${input.task}`,
      output: z.object({ kind: z.enum(["bug", "feature", "question"]), reason: z.string() }),
      validate: (out) => (out.reason.length < 10 ? "give a reason of at least one sentence" : undefined),
      timeoutMs: 15 * 60_000,
    }),
  },
  edges: { classify: { to: "done" } },
});
