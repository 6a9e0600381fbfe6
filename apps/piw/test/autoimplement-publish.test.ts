import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import { isClockReason, type RunView } from "@piw/protocol";
import {
  fakeAgentHome,
  type FakeModel,
  type GhCheck,
  type GhStandIn,
  installGhStandIn,
  lastMessageText,
  lastToolResultText,
  removeTree,
  startFakeModel,
  text,
  toolCall,
  waitFor,
} from "@piw/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, collect, makeHome, repo as checkout, spawnPiw } from "./cli-harness.js";

// autoimplement's publish child through `piw run` on a wrapper workflow: the real CLI, host and
// worker, real git with a local bare repository as `origin`, a stand-in `gh` on PATH that answers
// from a state file, and (for the fix round) an isolated Pi SDK session talking to a scripted model.
const SLOW = 240_000;
const PUBLISH = join(checkout, "packages", "builtins", "src", "autoimplement-publish.ts");

let model: FakeModel;
let home: string;
let user: string;
let agentEnv: NodeJS.ProcessEnv;
const dirs: string[] = [];

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

interface World {
  root: string;
  work: string;
  origin: string;
  wrapper: string;
  gh: GhStandIn;
}

/** A clone of a bare `origin` on branch `feature` (one commit ahead of main), and a wrapper workflow. */
function world(
  checks: GhCheck[][],
  extra: { auth?: boolean; crashAfterCreate?: boolean; logs?: Record<string, string> } = {},
): World {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "piw-publish-")));
  dirs.push(root);
  const origin = join(root, "origin.git");
  const work = join(root, "work");
  git(root, "init", "-q", "--bare", "-b", "main", origin);
  mkdirSync(work);
  git(work, "init", "-q", "-b", "main");
  git(work, "remote", "add", "origin", origin);
  git(work, "config", "user.email", "dev@example.com");
  git(work, "config", "user.name", "Dev");
  writeFileSync(join(work, "sum.js"), "export const sum = (a, b) => a + b + 1;\n");
  git(work, "add", ".");
  git(work, "commit", "-qm", "base");
  git(work, "push", "-q", "origin", "main");
  git(work, "switch", "-q", "-c", "feature");
  writeFileSync(join(work, "README.md"), "# widget\n");
  git(work, "add", ".");
  git(work, "commit", "-qm", "Add a README");
  const wrapper = join(root, "publish-wrapper.workflow.ts");
  writeFileSync(
    wrapper,
    `import { defineWorkflow, includeWorkflow } from "piw";
import { z } from "zod";
import publish from ${JSON.stringify(PUBLISH)};

/** Mounts the publish child as autoimplement does, passing its input through. */
export default defineWorkflow({
  name: "publish-wrapper",
  input: z.record(z.string(), z.unknown()),
  startAt: "publish",
  includes: { publish: includeWorkflow(publish, { input: ({ input }) => input }) },
  nodes: {},
  edges: {
    "publish.published": { to: "done" },
    "publish.merged": { to: "done" },
    "publish.skipped": { to: "done" },
    "publish.failed": { to: "done" },
  },
});
`,
  );
  const gh = installGhStandIn(join(root, "gh"), { checks, ...extra });
  return { root, work, origin, wrapper, gh };
}

const INPUT = { branch: "feature", baseBranch: "main", title: "Add a README", body: "Adds a README." };

type Output = Record<string, unknown>;

async function publish(w: World, input: Record<string, unknown>, env: NodeJS.ProcessEnv = w.gh.env) {
  const child = spawnPiw(
    home,
    ["run", w.wrapper, "--input-json", JSON.stringify({ ...INPUT, ...input }), "--json"],
    {
      cwd: w.work,
      env: { ...agentEnv, ...env },
    },
  );
  const result = await collect(child);
  expect(result.stderr).toBe("");
  expect(result.code, result.stdout).toBe(0);
  return JSON.parse(result.stdout) as { runId: string; view: { status: string; output: { value: Output } } };
}

const ghCalls = (w: World, ...prefix: string[]) =>
  w.gh.calls().filter((args) => prefix.every((part, i) => args[i] === part));

/** Worker processes of this test's state folder that are alive now (their environment names it). */
function liveWorkers(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (/apps\/worker\/(src|dist)\/main/.test(cmdline) && environ.includes(`PIW_HOME=${home}`)) {
        found.push(Number(entry));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  agentEnv = fakeAgentHome(user, { model }).env;
  model.reply((r) => (lastToolResultText(r)?.includes("accepted") ? text("Done.") : undefined));
  // The fix: correct sum.js where the prompt says the repository is, then submit.
  model.reply((r) => {
    const prompt = lastMessageText(r);
    if (lastToolResultText(r)?.includes("Successfully wrote")) {
      return toolCall("workflow", {
        action: "submit",
        output: { summary: "sum added one too many; it now adds its two numbers.", files: ["sum.js"] },
      });
    }
    const folder = /in the repository at (\/\S+), on branch/.exec(prompt)?.[1];
    return folder === undefined
      ? undefined
      : toolCall("write", { path: join(folder, "sum.js"), content: "export const sum = (a, b) => a + b;\n" });
  });
});

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  for (const dir of [user, ...dirs]) removeTree(dir);
});

const pass = (name: string): GhCheck => ({ name, bucket: "pass", link: "" });

describe("autoimplement's publish child, with a stand-in gh", () => {
  it(
    "skips with a note, not a failure, when gh is missing or not logged in",
    async () => {
      const w = world([]);
      // PATH without the stand-in: this machine has no gh of its own.
      const missing = await publish(w, {}, { PATH: `${join(process.execPath, "..")}:/usr/bin:/bin` });
      expect(missing.view.status).toBe("done");
      expect(missing.view.output.value).toEqual({
        status: "skipped",
        note: "Publishing was skipped: gh (the GitHub CLI) is not on PATH. Install it and run gh auth login.",
        branch: "feature",
      });

      const loggedOut = world([], { auth: false });
      const unauthenticated = await publish(loggedOut, {});
      expect(unauthenticated.view.output.value).toMatchObject({ status: "skipped" });
      expect(String(unauthenticated.view.output.value.note)).toMatch(/gh auth status failed/);
      expect(ghCalls(loggedOut, "pr")).toEqual([]);
      // Nothing was pushed.
      expect(git(loggedOut.origin, "branch", "--list", "feature")).toBe("");
    },
    SLOW,
  );

  it(
    "pushes, opens the PR, parks between looks at pending checks with no worker alive, and leaves it open",
    async () => {
      const w = world([[{ name: "test", bucket: "pending", link: "" }], [pass("test")]]);
      // The host is up (an earlier `piw` started it, or this one does) before the client connects.
      expect((await collect(spawnPiw(home, ["list"]))).code).toBe(0);
      const client = await connectHost({ stateDir: home, client: "cli", autoStart: false });
      const views: RunView[] = [];
      const unsubscribe = await client.subscribe(undefined, (view) => views.push(view));
      try {
        const running = publish(w, { pollSeconds: 8 });
        const parked = await waitFor(
          "the run to park on its wait",
          () =>
            views.find(
              (v) => v.status === "parked" && v.recoveryReason !== null && isClockReason(v.recoveryReason),
            ),
          60_000,
        );
        expect(parked.currentWork).toEqual({ kind: "none" });
        expect(liveWorkers()).toEqual([]);
        const { view } = await running;
        expect(view.output.value).toEqual({
          status: "published",
          pr: { number: 1, url: "https://github.com/acme/widget/pull/1", reused: false },
          branch: "feature",
          checks: { state: "passing", names: ["test"] },
          rounds: 0,
        });
      } finally {
        await unsubscribe();
        client.close();
      }
      expect(git(w.origin, "rev-parse", "refs/heads/feature")).toBe(git(w.work, "rev-parse", "HEAD"));
      expect(ghCalls(w, "pr", "create")).toHaveLength(1);
      expect(ghCalls(w, "pr", "checks")).toHaveLength(2);
      expect(ghCalls(w, "pr", "merge")).toEqual([]);
      expect(w.gh.state().prs).toMatchObject([{ number: 1, head: "feature", base: "main", state: "OPEN" }]);
    },
    SLOW,
  );

  it(
    "adopts the PR its crashed first attempt opened (no second pr create) and merges it when merge is set",
    async () => {
      const w = world([[pass("test")]], { crashAfterCreate: true });
      const { view } = await publish(w, { merge: true });
      expect(view.output.value).toMatchObject({
        status: "merged",
        pr: { number: 1, reused: true },
        checks: { state: "passing" },
        method: "merge",
      });
      expect(ghCalls(w, "pr", "create")).toHaveLength(1);
      expect(ghCalls(w, "pr", "list")).toHaveLength(2);
      expect(ghCalls(w, "pr", "merge")).toEqual([["pr", "merge", "1", "--merge"]]);
      expect(w.gh.state().prs).toMatchObject([{ number: 1, state: "MERGED" }]);
    },
    SLOW,
  );

  it(
    "sends a failing check with its log to the fix step, commits and pushes the fix, and ends published",
    async () => {
      const failing: GhCheck = {
        name: "test",
        bucket: "fail",
        link: "https://github.com/acme/widget/actions/runs/77/job/1",
      };
      const w = world([[failing], [pass("test")]], {
        logs: { "77": "FAIL sum.test.js\n  expected sum(1, 2) to be 3, got 4" },
      });
      const before = model.requests.length;
      const { view } = await publish(w, { maxRounds: 2 });
      expect(view.output.value).toMatchObject({
        status: "published",
        checks: { state: "passing", names: ["test"] },
        rounds: 1,
      });
      const prompt = model.requests
        .slice(before)
        .map((r) => lastMessageText(r))
        .find((t) => t.includes("checks of pull request #1"));
      expect(prompt).toContain("expected sum(1, 2) to be 3, got 4");
      expect(prompt).toContain("- test");
      expect(ghCalls(w, "run", "view")).toEqual([["run", "view", "77", "--log-failed"]]);
      // The fix is the branch's new head on origin, committed by the workflow.
      expect(git(w.origin, "log", "-1", "--format=%s", "refs/heads/feature")).toBe(
        "Fix failing checks (round 1): test",
      );
      expect(git(w.origin, "show", "refs/heads/feature:sum.js")).toBe("export const sum = (a, b) => a + b;");
      expect(ghCalls(w, "pr", "create")).toHaveLength(1);
      model.assertNoErrors();
    },
    SLOW,
  );
});
