import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { ManagedEffects } from "../compiler/compiled-workflow.js";
import { NodeFailure } from "../executor/execution-signals.js";

/** The effect type `commitChanges` saves under; one per call within a node visit. */
const COMMIT_EFFECT = "git.commit";

/** The trailer that marks a commit as made for one request: a retry finds it instead of committing twice. */
const TRAILER = "Piw-Request";

/** What `commitChanges` returns. `commit` is null when there was nothing to commit. */
export interface CommittedChanges {
  /** The repository (or worktree) root the commit was made in. */
  root: string;
  /** The branch it is on (null: a detached HEAD). */
  branch: string | null;
  commit: string | null;
  /** The files the commit holds, as git names them; at most 500. */
  files: string[];
  /** True when a retry found the commit an earlier attempt made and took it over. */
  adopted: boolean;
}

function git(cwd: string, args: readonly string[]): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((done) => {
    execFile("git", [...args], { cwd, encoding: "utf8", maxBuffer: 8 * 1024 * 1024 }, (error, stdout) => {
      done({ ok: error === null, stdout: stdout.trimEnd() });
    });
  });
}

// git's own output can quote paths, remotes and config, so a failure says only what we know.
async function must(cwd: string, args: readonly string[], failure: string): Promise<string> {
  const result = await git(cwd, args);
  if (!result.ok) throw new NodeFailure("node_failed", failure);
  return result.stdout;
}

async function committed(root: string, branch: string | null, adopted: boolean): Promise<CommittedChanges> {
  const commit = await must(root, ["rev-parse", "HEAD"], "The commit could not be read back.");
  const listed = await must(
    root,
    ["show", "--name-only", "--format=", "--no-renames", commit],
    "The commit could not be read back.",
  );
  const files = listed.split("\n").filter(Boolean).slice(0, 500);
  return { root, branch, commit, files, adopted };
}

/**
 * Commits every change in the git working tree at `path` (relative: from the run's working
 * directory) with `message`, as one managed idempotent effect whose request is the tree's root, its
 * branch and the message. Untracked files are added, ignored ones are not. A retry after a crash
 * adopts the commit an earlier attempt made (found by its `Piw-Request` trailer) instead of making a
 * second one; nothing to commit returns `commit: null`. Hooks run as for any commit: one that refuses
 * fails the node.
 */
export async function commitChanges(
  effects: ManagedEffects,
  options: { path: string; message: string },
): Promise<CommittedChanges> {
  const from = resolve(options.path);
  if (!existsSync(from)) throw new NodeFailure("node_failed", "The folder to commit in does not exist.");
  const top = await must(
    from,
    ["rev-parse", "--show-toplevel"],
    "The folder is not inside a git repository.",
  );
  const root = realpathSync(top);
  const head = await git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const branch = head.ok && head.stdout !== "" ? head.stdout : null;
  const message = options.message.trim();
  if (message === "") throw new NodeFailure("node_failed", "A commit needs a message.");
  const request = { root, branch, message };
  return effects.idempotent(COMMIT_EFFECT, request, async () => {
    const mark = createHash("sha256").update(JSON.stringify(request)).digest("hex").slice(0, 32);
    const last = await git(root, ["log", "-1", `--format=%(trailers:key=${TRAILER},valueonly)`]);
    if (last.ok && last.stdout.trim() === mark) return committed(root, branch, true);
    await must(root, ["add", "-A"], "The changes could not be staged.");
    const staged = await git(root, ["diff", "--cached", "--quiet"]);
    if (staged.ok) return { root, branch, commit: null, files: [], adopted: false };
    await must(
      root,
      ["commit", "--quiet", "--message", message, "--trailer", `${TRAILER}: ${mark}`],
      "git refused the commit (a hook failed, or git has no user name and email).",
    );
    return committed(root, branch, false);
  });
}
