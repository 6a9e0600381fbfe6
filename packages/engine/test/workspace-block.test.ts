import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  compileWorkflow,
  defineWorkflow,
  executeRun,
  includeWorkflow,
  MemoryRunPort,
  shell,
  type WorkspaceMode,
  type WorkspaceOutput,
  workspace,
} from "../src/index.js";
import { effectId, nodeVisitId } from "../src/identity/execution-identity.js";
import { started } from "./memory-run.js";

// The managed workspace block against real git repositories in temp folders.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

/** A repository with one commit on `main`, inside its own temp folder (worktrees go beside it). */
function repository(): string {
  const parent = realpathSync(mkdtempSync(join(tmpdir(), "piw-workspace-")));
  dirs.push(parent);
  const root = join(parent, "repo");
  execFileSync("git", ["init", "--quiet", "--initial-branch=main", root]);
  git(root, "config", "user.email", "test@example.com");
  git(root, "config", "user.name", "Test");
  writeFileSync(join(root, "README.md"), "hello\n");
  git(root, "add", "README.md");
  git(root, "commit", "--quiet", "-m", "first");
  return root;
}

function workspaceFlow(root: string, mode: WorkspaceMode) {
  return compileWorkflow(
    defineWorkflow({
      name: "fix",
      startAt: "prepare",
      nodes: {
        prepare: workspace({ mode, from: root }),
        where: shell({ exec: ["pwd"], parse: (r) => r.stdout }),
      },
      edges: { prepare: { to: "where" }, where: { to: "done" } },
    }),
  );
}

function outputOf(port: MemoryRunPort, path: string): unknown {
  return port.visits.find((v) => v.path === path && v.status === "succeeded")?.output;
}

function branches(root: string): string[] {
  return git(root, "branch", "--format=%(refname:short)").split("\n").sort();
}

describe("workspace()", () => {
  it("makes a worktree named after the run, and later shell steps run in it", async () => {
    const root = repository();
    const port = started(new MemoryRunPort({ runId: "fix-m1abc-0a1b2c3d" }));
    const outcome = await executeRun({ workflow: workspaceFlow(root, "worktree"), port });
    const prepared = outputOf(port, "prepare") as WorkspaceOutput;
    expect(prepared).toEqual({
      root,
      mode: "worktree",
      branch: "piw/fix-m1abc-0a1b2c3d",
      base: "main",
      path: join(root, "..", "repo.worktrees", "piw-fix-m1abc-0a1b2c3d"),
      baseCommit: git(root, "rev-parse", "main"),
      adopted: false,
    });
    expect(outcome).toEqual({ kind: "completed", output: prepared.path });
    expect(git(prepared.path, "branch", "--show-current")).toBe("piw/fix-m1abc-0a1b2c3d");
    // The user's own checkout stays where it was.
    expect(git(root, "branch", "--show-current")).toBe("main");
  });

  it("in branch mode switches the repository to the run's branch, from the base asked for", async () => {
    const root = repository();
    git(root, "branch", "release");
    const wf = compileWorkflow(
      defineWorkflow({
        name: "fix",
        startAt: "prepare",
        nodes: {
          prepare: workspace({ mode: "branch", base: "release", from: root }),
          where: shell({ exec: ["git", "branch", "--show-current"], parse: (r) => r.stdout }),
        },
        edges: { prepare: { to: "where" }, where: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort({ runId: "fix-1" }));
    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "completed", output: "piw/fix-1" });
    expect(outputOf(port, "prepare")).toMatchObject({ mode: "branch", path: root, base: "release" });
  });

  it("refuses a dirty tree with workspace_dirty naming the changed files, and makes nothing", async () => {
    const root = repository();
    writeFileSync(join(root, "README.md"), "changed\n");
    const port = started(new MemoryRunPort({ runId: "fix-2" }));
    const outcome = await executeRun({ workflow: workspaceFlow(root, "worktree"), port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "workspace_dirty" } });
    expect(outcome.kind === "failed" && outcome.error.message).toContain("README.md");
    expect(branches(root)).toEqual(["main"]);
    expect(existsSync(join(root, "..", "repo.worktrees"))).toBe(false);
  });

  it("adopts the branch and worktree an interrupted attempt made for the same request", async () => {
    const root = repository();
    const wf = workspaceFlow(root, "worktree");
    const first = started(new MemoryRunPort({ runId: "fix-3" }));
    await executeRun({ workflow: wf, port: first });
    // The same run whose effect record never settled (the worker died after git did its work).
    const retry = started(new MemoryRunPort({ runId: "fix-3" }));
    expect((await executeRun({ workflow: wf, port: retry })).kind).toBe("completed");
    expect(outputOf(retry, "prepare")).toMatchObject({ adopted: true, branch: "piw/fix-3" });
    expect(branches(root)).toEqual(["main", "piw/fix-3"]);
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(2);
  });

  it("refuses a branch of the same name that another request made (workspace_conflict)", async () => {
    const root = repository();
    git(root, "branch", "piw/fix-4");
    const port = started(new MemoryRunPort({ runId: "fix-4" }));
    const outcome = await executeRun({ workflow: workspaceFlow(root, "branch"), port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "workspace_conflict" } });
    expect(git(root, "branch", "--show-current")).toBe("main");
  });

  it("fails with effect_conflict when its identity was reserved with another request", async () => {
    const root = repository();
    const port = started(new MemoryRunPort({ runId: "fix-5" }));
    const id = effectId(nodeVisitId({ runId: "fix-5", path: "prepare", visit: 1 }), "git.workspace", 0);
    await port.reserveEffect({
      effectId: id,
      path: "prepare",
      visit: 1,
      effectType: "git.workspace",
      ordinal: 0,
      mode: "idempotent",
      request: { root, mode: "worktree", branch: "piw/other", base: "main", path: root },
    });
    const outcome = await executeRun({ workflow: workspaceFlow(root, "worktree"), port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "effect_conflict" } });
    expect(branches(root)).toEqual(["main"]);
  });

  it("gives a parent's and an included child's workspace two identities, each scope working in its own", async () => {
    const root = repository();
    const child = defineWorkflow({
      name: "child",
      startAt: "prepare",
      exits: ["ready"],
      nodes: {
        prepare: workspace({ from: root }),
        where: shell({ exec: ["pwd"], parse: (r) => r.stdout }),
      },
      edges: { prepare: { to: "where" }, where: { to: "ready" } },
    });
    const wf = compileWorkflow(
      defineWorkflow({
        name: "parent",
        startAt: "prepare",
        nodes: {
          prepare: workspace({ from: root }),
          where: shell({ exec: ["pwd"], parse: (r) => r.stdout }),
        },
        includes: { docs: includeWorkflow(child) },
        edges: { prepare: { to: "docs" }, "docs.ready": { to: "where" }, where: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort({ runId: "parent-6" }));
    expect((await executeRun({ workflow: wf, port })).kind).toBe("completed");
    const parent = outputOf(port, "prepare") as WorkspaceOutput;
    const nested = outputOf(port, "docs/prepare") as WorkspaceOutput;
    expect([parent.branch, nested.branch]).toEqual(["piw/parent-6", "piw/parent-6-docs"]);
    expect(outputOf(port, "docs/where")).toBe(nested.path);
    expect(outputOf(port, "where")).toBe(parent.path);
    const effectIds = [...port.effects.keys()];
    expect(effectIds).toHaveLength(2);
    expect(new Set(effectIds).size).toBe(2);
  });
});
