import { agent, decision, decisionEdge, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { topic: string };

/** The model drafts, then reviews its own draft; a rejected draft loops back, bounded by maxSteps. */
export default defineWorkflow({
  name: "review-loop",
  input: z.object({ topic: z.string() }),
  startAt: "draft",
  maxSteps: 20,
  presentationPrompt: "Tell the user what was written and whether the review approved it.",
  nodes: {
    draft: agent({
      prompt: ({ input, node }: NodeContext<Input>) =>
        `Write draft ${node.visit} of a short note about ${input.topic}.`,
      output: z.object({ text: z.string().min(1) }),
    }),
    review: agent({
      prompt: ({ outputs }) =>
        `Review this draft and approve or reject it:\n${(outputs.draft as { text: string }).text}`,
      output: z.object({ verdict: z.enum(["approve", "reject"]), note: z.string() }),
    }),
    route: decision({
      choices: ["accept", "revise"],
      decide: ({ outputs }) =>
        (outputs.review as { verdict: string }).verdict === "approve" ? "accept" : "revise",
    }),
  },
  edges: {
    draft: { to: "review" },
    review: { to: "route" },
    route: decisionEdge({ accept: "done", revise: "draft" }),
  },
});
