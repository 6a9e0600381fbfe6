import { compute, defineWorkflow, includeWorkflow, type ScopeContext } from "piw";
import { z } from "zod";
import child from "./include-child.workflow.ts";

type Input = { task: string };

/** One child workflow mounted twice; each mount gets its own input and its own full paths. */
export default defineWorkflow({
  name: "include",
  input: z.object({ task: z.string() }),
  startAt: "first",
  includes: {
    first: includeWorkflow(child, { input: ({ input }: ScopeContext<Input>) => ({ name: input.task }) }),
    second: includeWorkflow(child, { input: { name: "again" } }),
  },
  nodes: {
    summary: compute({
      run: ({ input }: { input: Input }) => `both mounts greeted, the first one ${input.task}`,
    }),
  },
  edges: {
    "first.greeted": { to: "second" },
    "second.greeted": { to: "summary" },
    summary: { to: "done" },
  },
});
