import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import { type RunHistory, WORKSPACE_EFFECT } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  lastToolResultText,
  removeTree,
  installGhStandIn,
  startFakeModel,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
} from "@piw/test-kit";
import { cleanUp, makeHome, piw } from "./cli-harness.js";

// The built-in autoimplement through `piw run`, headless: its change steps run in isolated Pi SDK
// sessions with edit tools against a scripted model, its checks are detected from package.json and
// really run, and the commit lands on the run's branch in a real worktree.
const SLOW = 300_000;

let model: FakeModel;
let home: string;
let user: string;
let env: NodeJS.ProcessEnv;
const dirs: string[] = [];

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** A repository whose one test fails: sum subtracts. The plan says to make it add. */
function repository(plan: string): string {
  const repo = mkdtempSync(join(tmpdir(), "piw-autoimplement-"));
  dirs.push(repo, `${repo}.worktrees`);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.email", "dev@example.com");
  git(repo, "config", "user.name", "Dev");
  writeFileSync(
    join(repo, "package.json"),
    JSON.stringify({ type: "module", scripts: { test: "node --test" } }, null, 2),
  );
  writeFileSync(join(repo, "sum.js"), "export const sum = (a, b) => a - b;\n");
  writeFileSync(
    join(repo, "sum.test.js"),
    'import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "./sum.js";\n\ntest("sum adds", () => assert.equal(sum(2, 3), 5));\n',
  );
  writeFileSync(join(repo, "README.md"), "# sum\n\n`sum(a, b)` adds two numbers.\n");
  mkdirSync(join(repo, "docs", "plans"), { recursive: true });
  writeFileSync(join(repo, "docs", "plans", "fix-sum.md"), plan);
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "start");
  return repo;
}

const PLAN =
  "# Make sum add\n\nsum subtracts; it must add its two arguments. The test in sum.test.js proves it.\n";

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = fakeAgentHome(user, { model }).env;
  // Every session ends once its submission is accepted.
  model.reply((r) => (lastToolResultText(r)?.includes("accepted") ? text("Done.") : undefined));
  // Implement leaves the bug (it only writes a note), so the first checks fail.
  model.reply(
    whenLastMessageContains(
      "Implement the plan in",
      toolCall("write", { path: "NOTES.md", content: "sum must add.\n" }),
    ),
  );
  model.reply(
    whenToolResultContains(
      "NOTES.md",
      submit({
        status: "done",
        summary: "Wrote down what sum must do.",
        files: [{ path: "NOTES.md", change: "added", why: "the plan's goal" }],
        blocker: null,
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "These checks fail",
      toolCall("write", { path: "sum.js", content: "export const sum = (a, b) => a + b;\n" }),
    ),
  );
  model.reply(
    whenToolResultContains(
      "sum.js",
      submit({
        status: "done",
        summary: "sum adds its arguments.",
        files: [{ path: "sum.js", change: "modified", why: "it subtracted" }],
        blocker: null,
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Your lens — Tests",
      submit({
        summary: "The test covers the change.",
        findings: [
          {
            severity: "P3",
            title: "One case only",
            detail: "A negative case would be nice.",
            file: "sum.test.js",
            line: 5,
            quote: 'test("sum adds"',
          },
        ],
      }),
    ),
  );
  model.reply(whenLastMessageContains("Review the change in", submit({ summary: "Sound.", findings: [] })));
  // autodoc, included first when the plan names README.md: the README is already current.
  model.reply(
    whenLastMessageContains(
      "Find the documentation this change makes",
      submit({
        documents: [{ path: "README.md", decision: "current", reason: "It says sum adds.", edits: [] }],
        summary: "The README describes sum.",
      }),
    ),
  );
});

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  for (const dir of [user, ...dirs]) removeTree(dir);
});

type Result = { runId: string; view: { status: string; output: { value: Record<string, unknown> } } };

async function autoimplement(repo: string): Promise<Result> {
  const result = await piw(home, ["run", "autoimplement", "--json", "docs/plans/fix-sum.md"], {
    cwd: repo,
    env,
  });
  expect(result.stderr).toBe("");
  expect(result.code, result.stdout).toBe(0);
  return JSON.parse(result.stdout) as Result;
}

async function history(runId: string): Promise<RunHistory> {
  const host = await connectHost({ stateDir: home, client: "test" });
  try {
    const found = await host.call("runs.history", { runId });
    if (!found) throw new Error(`no history for ${runId}`);
    return found;
  } finally {
    host.close();
  }
}

describe("piw run autoimplement, headless", () => {
  it(
    "implements a plan file: checks fail, the fix makes them pass, three reviewers review, and the change is committed on the run's branch",
    async () => {
      const repo = repository(PLAN);
      const { view } = await autoimplement(repo);
      const value = view.output.value;
      expect(value).toMatchObject({
        status: "committed",
        reason: null,
        plan: { title: "Make sum add", digest: expect.stringMatching(/^sha256:/) },
        checks: [
          { round: 1, name: "test", command: "npm run test", passed: false, exitCode: 1 },
          { round: 2, name: "test", command: "npm run test", passed: true, exitCode: 0 },
        ],
        findings: { bySeverity: { P0: 0, P1: 0, P2: 0, P3: 1 } },
        changes: [
          { step: "implement", status: "done", files: ["added NOTES.md"] },
          { step: "fix", status: "done", files: ["modified sum.js"] },
        ],
      });
      const workspace = value.workspace as { path: string; branch: string };
      const commit = value.commit as { commit: string; branch: string; files: string[] };
      expect(commit.branch).toBe(workspace.branch);
      expect(commit.files.sort()).toEqual(["NOTES.md", "sum.js"]);
      expect(git(workspace.path, "rev-parse", "HEAD")).toBe(commit.commit);
      expect(git(workspace.path, "log", "-1", "--format=%s")).toBe("Make sum add");
      expect(readFileSync(join(workspace.path, "sum.js"), "utf8")).toContain("a + b");
      // The user's checkout is untouched: still on main, the bug still there.
      expect(git(repo, "branch", "--show-current")).toBe("main");
      expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a - b");

      // The fix step got the failing output's end, not the whole log.
      const fix = model.requests.map(lastMessageText).find((text) => text.includes("These checks fail"));
      expect(fix).toContain("npm run test");
      expect(fix).toMatch(/fail|AssertionError/);
      // Three reviewers, each in a read-only session.
      const reviews = model.requests.filter((r) => lastMessageText(r).includes("Review the change in"));
      expect(reviews).toHaveLength(3);
      for (const review of reviews) {
        expect(review.tools.map((t) => t.function.name).sort()).toEqual([
          "find",
          "grep",
          "ls",
          "read",
          "workflow",
        ]);
      }
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "brings the documents the plan names in line first: autodoc's own workspace preparation runs inside the run, with an identity of its own",
    async () => {
      const repo = repository(`${PLAN}\nREADME.md describes sum.\n`);
      const { runId, view } = await autoimplement(repo);
      expect(view.output.value).toMatchObject({ status: "committed" });
      const saved = await history(runId);
      const prepared = saved.effects.filter((effect) => effect.effectType === WORKSPACE_EFFECT);
      // Two preparations in one run: the run's worktree, and autodoc's branch inside it, each settled
      // under its own full path, so neither collides with the other.
      expect(prepared.map((effect) => [effect.path, effect.status])).toEqual([
        ["worktree", "settled"],
        ["documentation/branch", "settled"],
      ]);
      expect(new Set(prepared.map((effect) => effect.effectId)).size).toBe(2);
      const workspace = view.output.value.workspace as { path: string; branch: string };
      expect(workspace.branch).toBe(`piw/${runId}`);
      expect(git(repo, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual([
        "main",
        `piw/${runId}`,
        `piw/${runId}-documentation`,
      ]);
      // The change is committed on the run's own branch, not on autodoc's.
      expect(git(workspace.path, "branch", "--show-current")).toBe(`piw/${runId}`);
      expect(git(workspace.path, "log", "-1", "--format=%s")).toBe("Make sum add");
      expect(
        model.requests.some((r) => lastMessageText(r).includes("Find the documentation this change makes")),
      ).toBe(true);
    },
    SLOW,
  );

  it(
    "publishes the commit when asked: pushes the run's branch, opens its PR against the base and reports it",
    async () => {
      const repo = repository(PLAN);
      const origin = `${repo}-origin.git`;
      dirs.push(origin, `${repo}-gh`);
      execFileSync("git", ["init", "-q", "--bare", "-b", "main", origin]);
      git(repo, "remote", "add", "origin", origin);
      git(repo, "push", "-q", "origin", "main");
      const gh = installGhStandIn(`${repo}-gh`, { checks: [[{ name: "ci", bucket: "pass", link: "" }]] });
      const input = JSON.stringify({ task: "docs/plans/fix-sum.md", publish: true });
      const result = await piw(home, ["run", "autoimplement", "--json", "--input-json", input], {
        cwd: repo,
        env: { ...env, ...gh.env },
      });
      expect(result.stderr).toBe("");
      expect(result.code, result.stdout).toBe(0);
      const { runId, view } = JSON.parse(result.stdout) as Result;
      expect(view.output.value).toMatchObject({
        status: "committed",
        publish: {
          outcome: "published",
          pr: { number: 1, url: "https://github.com/acme/widget/pull/1", state: "OPEN" },
        },
      });
      const commit = view.output.value.commit as { commit: string };
      expect(git(origin, "rev-parse", `refs/heads/piw/${runId}`)).toBe(commit.commit);
      expect(gh.state().prs).toMatchObject([{ head: `piw/${runId}`, base: "main", title: "Make sum add" }]);
    },
    SLOW,
  );
});
