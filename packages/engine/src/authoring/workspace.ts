import { WORKSPACE_EFFECT } from "@piw/protocol";
import type { ActionContext } from "../compiler/compiled-workflow.js";
import {
  defaultWorktreePath,
  findRepository,
  prepareWorkspace,
  resolveWorktreePath,
  savedBase,
  type WorkspaceMode,
  type WorkspaceOutput,
  type WorkspaceRequest,
  workspaceBranchName,
} from "./git-workspace.js";
import type { ActionNode, TimeoutOption } from "./node-specs.js";

export type { WorkspaceMode, WorkspaceOutput } from "./git-workspace.js";

export { WORKSPACE_EFFECT } from "@piw/protocol";

export interface WorkspaceOptions<I = unknown> {
  title?: string;
  /** `"worktree"` (the default): a `git worktree` beside the repository; `"branch"`: switch the repository itself. */
  mode?: WorkspaceMode;
  /** The ref the branch starts from; default (also when the function returns undefined) the repository's current branch. */
  base?: string | ((ctx: ActionContext<I>) => string | undefined);
  /**
   * The branch name; default (also when the function returns undefined) `piw/<run id>`, plus the
   * scope for an included workflow's workspace.
   */
  branch?: string | ((ctx: ActionContext<I>) => string | undefined);
  /** Worktree mode: its folder (relative to the repository root); default `<repo>.worktrees/<branch>` beside it. */
  path?: string;
  /** Where to look for the repository (a folder inside it); default the run's folder. */
  from?: string | ((ctx: ActionContext<I>) => string);
  timeoutMs?: TimeoutOption<I>;
}

/** A workspace node: an action whose output later shell and agent steps of its scope run in. */
export interface WorkspaceNode<I = unknown> extends ActionNode<I, WorkspaceOutput> {
  readonly workspace: true;
}

/** The scope of a node path (`docs/workspace/prepare` → `docs/workspace`). */
function scopeOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

/**
 * Prepares a git workspace for the run as one managed effect: a branch (or a branch in a new
 * `git worktree`) named after the run, from a clean tree. Later shell and agent steps of its scope
 * (and of scopes it includes) run in it. A retry adopts what an earlier attempt made.
 */
export function workspace<I = unknown>(options: WorkspaceOptions<I> = {}): WorkspaceNode<I> {
  const mode = options.mode ?? "worktree";
  const run = async (ctx: ActionContext<I>): Promise<WorkspaceOutput> => {
    const from = typeof options.from === "function" ? options.from(ctx) : options.from;
    const repo = await findRepository(from ?? process.cwd());
    const named = typeof options.branch === "function" ? options.branch(ctx) : options.branch;
    const branch = named ?? workspaceBranchName(ctx.run.id, scopeOf(ctx.node.path));
    const asked = typeof options.base === "function" ? options.base(ctx) : options.base;
    // After a crash in branch mode the repository is already on our branch: its saved base is the one asked.
    const base =
      asked ?? (repo.current === branch ? await savedBase(repo.root, branch) : repo.current) ?? "HEAD";
    const path =
      mode === "branch"
        ? repo.root
        : options.path === undefined
          ? defaultWorktreePath(repo.root, branch)
          : resolveWorktreePath(repo.root, options.path);
    const request: WorkspaceRequest = { root: repo.root, mode, branch, base, path };
    return ctx.effects.idempotent(WORKSPACE_EFFECT, request, () => prepareWorkspace(request));
  };
  return {
    kind: "action",
    title: options.title ?? "Prepare the workspace",
    run,
    workspace: true,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  } as WorkspaceNode<I>;
}
