import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, idle, launchCount, parkReasons, readState, settledView } from "./fault-fixture.js";

// The managed workspace under a real host and real workers: a worker killed with SIGKILL right after
// git made the workspace (settled or not) is relaunched, and the relaunch adopts that branch and
// worktree instead of making a second one.

const WORKSPACE_FLOW = `import { type ActionContext, defineWorkflow, shell, workspace } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "ws",
  input: z.object({ repo: z.string() }),
  startAt: "prepare",
  nodes: {
    prepare: workspace({ from: ({ input }: ActionContext<{ repo: string }>) => input.repo }),
    where: shell({ exec: ["pwd"], parse: (report) => report.stdout }),
  },
  edges: { prepare: { to: "where" }, where: { to: "done" } },
});
`;

let box: Sandbox;
let host: HostProcess | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.kill9();
  host = undefined;
  box.cleanup();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

function repository(): string {
  const root = join(realpathSync(box.dir), "project", "repo");
  mkdirSync(root, { recursive: true });
  git(root, "init", "--quiet", "--initial-branch=main");
  writeFileSync(join(root, "README.md"), "hello\n");
  git(root, "add", "README.md");
  git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "first");
  return root;
}

describe("kill -9 of the worker once the workspace was made", () => {
  it.each([
    // git made the branch and worktree; the effect's result was never saved: the relaunch adopts them.
    ["after-effect", true],
    // The effect settled: the relaunch takes the saved result and never runs git again.
    ["after-effect-settle", false],
  ] as const)("%s: the relaunch keeps one branch and one worktree", async (boundary, adopted) => {
    const repo = repository();
    host = await HostProcess.start(box, {
      PIW_WORKER_CRASH_AT: boundary,
      PIW_WORKER_CRASH_ONCE_FILE: join(box.dir, "crashed-once"),
    });
    const c = await host.connect();
    client = c;
    const flow = await writeWorkflow(box, "ws", WORKSPACE_FLOW);
    const reserved = await c.call("runs.reserve", flow.reserve({ repo }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    const view = await settledView(c, runId);
    await idle(c);
    expect(host.log()).toContain(`PIW_WORKER_CRASH_AT=${boundary}: killing myself`);

    const branch = `piw/${runId}`;
    const worktree = join(realpathSync(join(repo, "..")), "repo.worktrees", branch.replace("/", "-"));
    expect(view.status).toBe("done");
    expect(view.output).toEqual({ kind: "json", value: worktree });
    expect(view.workspaces).toEqual([{ path: worktree, branch, mode: "worktree" }]);
    expect(git(repo, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual(["main", branch]);
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(2);
    const state = readState(box, (store) => ({
      launches: launchCount(store, runId),
      parks: parkReasons(store, runId),
      effects: store.listRunEffects(runId).map((e) => e.status),
    }));
    expect(state).toEqual({ launches: 2, parks: ["worker_lost"], effects: ["settled"] });
    // The saved output says whether the relaunch adopted git's work or only the saved result.
    const history = JSON.stringify(await c.call("runs.history", { runId }));
    expect(history).toContain(`"adopted":${adopted}`);
  });
});
