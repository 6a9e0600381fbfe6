import { approval, approvalChoice, type ApprovalMode, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string; approval?: ApprovalMode };

/** An approval gate: a person continues, stops or asks for a revision; `approval` decides if it is asked. */
export default defineWorkflow({
  name: "approval",
  input: z.object({
    task: z.string(),
    approval: z.enum(["required", "auto", "skip"]).optional(),
  }),
  startAt: "gate",
  nodes: {
    gate: approval({
      prompt: ({ input }: NodeContext<Input>) => `Ship ${input.task}?`,
      approval: ({ input }: NodeContext<Input>) => input.approval ?? "required",
      // Nobody answered within a day: continue, recorded as automatic.
      deadlineMs: 24 * 60 * 60_000,
    }),
    ship: compute({
      run: ({ input, outputs }: NodeContext<Input>) => ({ shipped: input.task, gate: outputs.gate }),
    }),
    hold: compute({
      run: ({ input, outputs }: NodeContext<Input>) => ({ held: input.task, gate: outputs.gate }),
    }),
  },
  edges: {
    gate: {
      to: ["ship", "hold"],
      route: (out) => {
        const choice = approvalChoice(out);
        return choice === "continue" || choice === "skipped" ? "ship" : "hold";
      },
    },
    ship: { to: "done" },
    hold: { to: "done" },
  },
});
