import { type ActionContext, defineWorkflow, shell, workspace } from "piw";
import { z } from "zod";

type Input = { repo: string };

/** Prepares a worktree for the run, then shows that the next step runs inside it. */
export default defineWorkflow({
  name: "workspace",
  input: z.object({ repo: z.string().describe("a folder inside a git repository with a clean tree") }),
  startAt: "prepare",
  nodes: {
    prepare: workspace({ mode: "worktree", from: ({ input }: ActionContext<Input>) => input.repo }),
    // No `cwd`: the command runs in the worktree `prepare` made.
    where: shell({
      exec: ["git", "branch", "--show-current"],
      parse: (report) => ({ branch: report.stdout }),
    }),
  },
  edges: { prepare: { to: "where" }, where: { to: "done" } },
});
