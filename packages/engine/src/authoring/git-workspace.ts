import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { boundSafeMessage } from "@piw/protocol";
import { NodeFailure } from "../executor/execution-signals.js";

// The git work behind `workspace()`. Every failure is a NodeFailure with a workspace code and our own
// words: git's stderr can quote paths, remotes and config, so it is never saved.

export type WorkspaceMode = "branch" | "worktree";

/** What the workspace effect is asked for; its fingerprint is the effect's request. */
export interface WorkspaceRequest {
  root: string;
  mode: WorkspaceMode;
  branch: string;
  base: string;
  /** The worktree's folder (worktree mode); the repository root in branch mode. */
  path: string;
}

/** The workspace a run's later shell and agent steps run in. */
export interface WorkspaceOutput extends WorkspaceRequest {
  /** The commit the branch was made at. */
  baseCommit: string;
  /** True when a retry found the branch (and worktree) an earlier attempt made and took it over. */
  adopted: boolean;
}

/** How many dirty entries a `workspace_dirty` failure names. */
const MAX_DIRTY_LISTED = 10;

function git(cwd: string, args: readonly string[]): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((done) => {
    execFile("git", [...args], { cwd, encoding: "utf8", maxBuffer: 8 * 1024 * 1024 }, (error, stdout) => {
      done({ ok: error === null, stdout: stdout.trimEnd() });
    });
  });
}

async function gitValue(cwd: string, args: readonly string[], failure: string): Promise<string> {
  const result = await git(cwd, args);
  if (!result.ok) throw new NodeFailure("workspace_unavailable", failure);
  return result.stdout;
}

/** Where a run's repository is and which branch it is on (null: a detached HEAD). */
export async function findRepository(from: string): Promise<{ root: string; current: string | null }> {
  if (!existsSync(from))
    throw new NodeFailure("workspace_unavailable", "The workspace folder does not exist.");
  const root = await gitValue(
    from,
    ["rev-parse", "--show-toplevel"],
    "The run's folder is not inside a git repository (or git is not installed).",
  );
  const head = await git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  return { root: realpathSync(root), current: head.ok && head.stdout !== "" ? head.stdout : null };
}

/** `piw/<run id>` (plus the including scope), as a valid branch name. */
export function workspaceBranchName(runId: string, scope: string): string {
  const slug = (text: string) => text.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
  return scope === "" ? `piw/${slug(runId)}` : `piw/${slug(runId)}-${slug(scope)}`;
}

/** Default worktree folder: beside the repository, `<repo>.worktrees/<branch without piw/>`. */
export function defaultWorktreePath(root: string, branch: string): string {
  return join(dirname(root), `${basename(root)}.worktrees`, branch.replace(/\//g, "-"));
}

export function resolveWorktreePath(root: string, path: string): string {
  return resolve(root, path);
}

/** The base ref a branch of `workspace()` was made from (null: not one of ours). */
export async function savedBase(root: string, branch: string): Promise<string | null> {
  const saved = await git(root, ["config", "--get", `branch.${branch}.piwBase`]);
  return saved.ok && saved.stdout !== "" ? saved.stdout : null;
}

/** The branch config key that marks a branch as made for one request: adoption checks it. */
function markerKey(branch: string): string {
  return `branch.${branch}.piwRequest`;
}

function requestDigest(request: WorkspaceRequest): string {
  const canonical = JSON.stringify([request.root, request.mode, request.branch, request.base, request.path]);
  return createHash("sha256").update(canonical).digest("hex");
}

async function branchCommit(root: string, branch: string): Promise<string | null> {
  const result = await git(root, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
  return result.ok ? result.stdout : null;
}

/** Tracked files with changes (staged or not); untracked files are not lost by either mode. */
async function dirtyEntries(root: string): Promise<string[]> {
  const status = await gitValue(
    root,
    ["status", "--porcelain=v1", "--untracked-files=no"],
    "git status failed in the repository.",
  );
  return status === "" ? [] : status.split("\n");
}

function dirtyFailure(entries: readonly string[]): NodeFailure {
  const listed = entries.slice(0, MAX_DIRTY_LISTED).map((line) => line.trim());
  const more = entries.length > listed.length ? ` and ${entries.length - listed.length} more` : "";
  return new NodeFailure(
    "workspace_dirty",
    boundSafeMessage(
      `The repository has uncommitted changes; commit or stash them first: ${listed.join(", ")}${more}.`,
    ),
  );
}

/** The worktree registered at `path`, and its branch (null: none there). */
async function worktreeBranchAt(root: string, path: string): Promise<string | null | undefined> {
  const list = await gitValue(root, ["worktree", "list", "--porcelain"], "git worktree list failed.");
  let current: string | undefined;
  for (const line of list.split("\n")) {
    if (line.startsWith("worktree ")) current = line.slice("worktree ".length);
    else if (current !== undefined && sameFolder(current, path) && line.startsWith("branch ")) {
      return line.slice("branch refs/heads/".length);
    }
  }
  return current === undefined ? undefined : null;
}

function sameFolder(a: string, b: string): boolean {
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));
  return real(a) === real(b);
}

/**
 * Make the branch (and worktree) of `request`, or adopt the ones an earlier attempt made for the same
 * request. The marker is written before the branch, so a branch that carries this request's digest
 * was made by this request, whatever crashed in between; a branch without it is someone else's.
 */
export async function prepareWorkspace(request: WorkspaceRequest): Promise<WorkspaceOutput> {
  const { root, branch, mode, path } = request;
  const digest = requestDigest(request);
  const existing = await branchCommit(root, branch);
  if (existing !== null) {
    const marker = await git(root, ["config", "--get", markerKey(branch)]);
    if (!marker.ok || marker.stdout !== digest) {
      throw new NodeFailure(
        "workspace_conflict",
        `Branch ${branch} already exists and was not made for this workspace request; delete or rename it.`,
      );
    }
    return { ...request, baseCommit: await adopt(request, existing), adopted: true };
  }
  // A worktree starts from a commit, so changes left in the tree would silently stay behind.
  const entries = await dirtyEntries(root);
  if (entries.length > 0) throw dirtyFailure(entries);
  const baseCommit = await gitValue(
    root,
    ["rev-parse", "--verify", "--quiet", `${request.base}^{commit}`],
    `The base ref ${request.base} is not a commit in the repository.`,
  );
  if (mode === "worktree" && existsSync(path)) {
    throw new NodeFailure(
      "workspace_conflict",
      `The worktree folder ${path} already exists; remove it or choose another path.`,
    );
  }
  await gitValue(root, ["config", markerKey(branch), digest], "git config failed in the repository.");
  await gitValue(root, ["config", `branch.${branch}.piwBase`, request.base], "git config failed.");
  await gitValue(root, ["config", `branch.${branch}.piwBaseCommit`, baseCommit], "git config failed.");
  const made =
    mode === "branch"
      ? await git(root, ["switch", "--quiet", "--create", branch, baseCommit])
      : await git(root, ["worktree", "add", "--quiet", "-b", branch, path, baseCommit]);
  if (!made.ok) {
    throw new NodeFailure("workspace_unavailable", `git could not create the ${mode} ${branch}.`);
  }
  return { ...request, baseCommit, adopted: false };
}

/** Finish what an earlier attempt began: check out the branch or add its worktree if missing. */
async function adopt(request: WorkspaceRequest, commit: string): Promise<string> {
  const { root, branch, mode, path } = request;
  const saved = await git(root, ["config", "--get", `branch.${branch}.piwBaseCommit`]);
  const baseCommit = saved.ok && saved.stdout !== "" ? saved.stdout : commit;
  if (mode === "branch") {
    const head = await git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
    if (head.stdout === branch) return baseCommit;
    const entries = await dirtyEntries(root);
    if (entries.length > 0) throw dirtyFailure(entries);
    await gitValue(root, ["switch", "--quiet", branch], `git could not switch to ${branch}.`);
    return baseCommit;
  }
  const there = await worktreeBranchAt(root, path);
  if (there === branch) return baseCommit;
  if (existsSync(path)) {
    throw new NodeFailure(
      "workspace_conflict",
      `The worktree folder ${path} exists but does not hold branch ${branch}.`,
    );
  }
  await gitValue(
    root,
    ["worktree", "add", "--quiet", path, branch],
    `git could not add the worktree ${path}.`,
  );
  return baseCommit;
}
