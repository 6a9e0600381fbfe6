import { z } from "zod";

/** The managed effect type of the authoring API's `workspace()` block; views find workspaces by it. */
export const WORKSPACE_EFFECT = "git.workspace";

/** Where a run's workspace is: shown by `piw status`, and left in place by a cancel. */
export const workspaceViewSchema = z.object({
  path: z.string().max(4096),
  branch: z.string().max(512),
  mode: z.enum(["branch", "worktree"]),
});
