import { compute, defineWorkflow, includeWorkflow, type ScopeContext } from "piw";
import { z } from "zod";
import workspace from "./workspace.workflow.ts";

type Input = { repo: string };

/** The same child workflow included twice, each mount with its own input and identity. */
export default defineWorkflow({
  name: "compose",
  input: z.object({ repo: z.string().default("piw") }),
  startAt: "code",
  includes: {
    code: includeWorkflow(workspace, {
      input: ({ input }: ScopeContext<Input>) => ({ dir: `${input.repo}/src` }),
    }),
    docs: includeWorkflow(workspace, {
      input: ({ input }: ScopeContext<Input>) => ({ dir: `${input.repo}/docs` }),
    }),
  },
  nodes: {
    summary: compute({ run: ({ input }: { input: Input }) => `workspaces ready for ${input.repo}` }),
  },
  edges: {
    "code.ready": { to: "docs" },
    "docs.ready": { to: "summary" },
    summary: { to: "done" },
  },
});
