import { checkpoint, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { change: string };

/** Stops at a human checkpoint; an accepted answer starts a continuation that carries the plan forward. */
export default defineWorkflow({
  name: "approval",
  input: z.object({ change: z.string() }),
  startAt: "plan",
  nodes: {
    plan: compute({
      run: ({ input }: NodeContext<Input>) => ({ steps: [`apply ${input.change}`, "verify"] }),
    }),
    approve: checkpoint({
      prompt: ({ outputs }) => `Approve the plan: ${JSON.stringify(outputs.plan)}?`,
      answer: z.object({ approved: z.boolean(), comment: z.string().optional() }),
    }),
    apply: compute({
      run: ({ outputs }) => {
        const answer = outputs.approve as { approved: boolean };
        return { applied: answer.approved, plan: outputs.plan };
      },
    }),
  },
  edges: { plan: { to: "approve" }, approve: { to: "apply" }, apply: { to: "done" } },
});
