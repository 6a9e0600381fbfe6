import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  lastToolResultText,
  lastUserText,
  type ModelRequest,
  removeTree,
  startFakeModel,
  text,
  toolCall,
} from "@piw/test-kit";
import { cleanUp, makeHome, piw } from "./cli-harness.js";

// The built-in autodoc through `piw run`, headless: the real CLI, host and worker, real git in a temp
// repository with a managed worktree, and isolated Pi SDK sessions talking to a scripted model.
const SLOW = 240_000;
const NEW_README = "# retry\n\n`withRetry(run, { retries })` runs `run` up to `retries` times (default 3).\n";

let model: FakeModel;
let home: string;
let user: string;
let env: NodeJS.ProcessEnv;
const dirs: string[] = [];
const homes: string[] = [];

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

/** A repository whose last commit adds a retry option the README does not mention yet. */
function repository(): string {
  const repo = join(realpathSync(mkdtempSync(join(tmpdir(), "piw-autodoc-"))), "repo");
  dirs.push(join(repo, ".."));
  mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.email", "dev@example.com");
  git(repo, "config", "user.name", "Dev");
  writeFileSync(join(repo, "README.md"), "# retry\n\n`withRetry(run)` runs `run` three times.\n");
  writeFileSync(join(repo, "retry.ts"), "export function withRetry(run: () => void): void {}\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "base");
  writeFileSync(
    join(repo, "retry.ts"),
    "export function withRetry(run: () => void, { retries = 3 } = {}): void {\n  for (let i = 0; i < retries; i++) run();\n}\n",
  );
  git(repo, "commit", "-qam", "retries option");
  return repo;
}

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });
const firstUserText = (r: ModelRequest) => {
  const first = r.messages.find((m) => m.role === "user");
  return first === undefined ? "" : lastUserText({ ...r, messages: [first] });
};

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = fakeAgentHome(user, { model }).env;

  // Every session ends once its submission is accepted.
  model.reply((r) => (lastToolResultText(r)?.includes("accepted") ? text("Done.") : undefined));
  model.reply((r) =>
    lastMessageText(r).includes("Find the documentation this change makes")
      ? submit({
          documents: [
            {
              path: "README.md",
              decision: "update",
              reason: "It says three tries and does not mention the retries option.",
              edits: ["Document the retries option and its default."],
            },
          ],
          summary: "The README describes withRetry.",
        })
      : undefined,
  );
  // The update: write the README where the prompt says it is, then submit.
  model.reply((r) => {
    if (!firstUserText(r).includes("Update the documentation for this change")) return undefined;
    if (lastToolResultText(r)?.includes("Successfully wrote")) {
      return submit({ files: [{ path: "README.md", change: "Documented the retries option." }] });
    }
    const path = /(\/\S+\/README\.md)/.exec(lastMessageText(r))?.[1];
    return path === undefined ? undefined : toolCall("write", { path, content: NEW_README });
  });
  // The verifier backs the claim with retry.ts line 1, unless the task says it cannot.
  model.reply((r) => {
    const prompt = lastMessageText(r);
    if (!prompt.includes("List every claim the added or changed lines make")) return undefined;
    const unbacked = prompt.includes("unbackable");
    return submit({
      claims: [
        unbacked
          ? {
              document: "README.md",
              claim: "runs up to retries times",
              backed: false,
              evidence: [],
              problem: "retry.ts ignores it",
            }
          : {
              document: "README.md",
              claim: "withRetry takes a retries option, default 3",
              backed: true,
              evidence: [{ file: "retry.ts", line: 1, quote: "{ retries = 3 } = {}" }],
            },
      ],
    });
  });
});

afterAll(async () => {
  for (const state of [home, ...homes]) await cleanUp(state);
  await model?.close();
  for (const dir of [user, ...dirs]) removeTree(dir);
});

type View = { status: string; input: { value: unknown }; output: { value: Record<string, unknown> } };

async function run(repo: string, args: string[], extra: NodeJS.ProcessEnv = {}, state = home) {
  const result = await piw(state, ["run", ...args, "--json"], { cwd: repo, env: { ...env, ...extra } });
  expect(result.stderr).toBe("");
  expect(result.code, result.stdout).toBe(0);
  return JSON.parse(result.stdout) as { runId: string; view: View };
}

const sha256 = (file: string) => `sha256:${createHash("sha256").update(readFileSync(file)).digest("hex")}`;
const branches = (repo: string) => git(repo, "branch", "--format=%(refname:short)").split("\n").sort();

describe("piw run autodoc, headless", () => {
  it(
    "updates the README in a worktree from free words, backs the claim with a file and line, and ends ready with the digest",
    async () => {
      const repo = repository();
      const { runId, view } = await run(repo, ["autodoc", "the", "new", "retry", "option"]);
      expect(view.input.value).toEqual({ task: "the new retry option" });
      const worktree = join(`${repo}.worktrees`, `piw-${runId}`);
      expect(view.output.value).toMatchObject({
        status: "ready",
        task: "the new retry option",
        workspace: { path: worktree, branch: `piw/${runId}`, mode: "worktree" },
        documents: [
          {
            path: "README.md",
            decision: "update",
            changed: true,
            digest: sha256(join(worktree, "README.md")),
          },
        ],
        rounds: 1,
        claims: [{ document: "README.md", evidence: [{ file: "retry.ts", line: 1 }] }],
      });
      expect(readFileSync(join(worktree, "README.md"), "utf8")).toBe(NEW_README);
      // The user's checkout is untouched: the edit is on the run's branch, in its worktree.
      expect(readFileSync(join(repo, "README.md"), "utf8")).not.toBe(NEW_README);
      expect(branches(repo)).toEqual(["main", `piw/${runId}`]);

      // The assessor and the verifier had read-only tools; the update step could edit.
      const toolsOf = (needle: string) =>
        model.requests
          .filter((r) => firstUserText(r).includes(needle))
          .map((r) => r.tools.map((t) => t.function.name).sort())[0];
      expect(toolsOf("Find the documentation")).toEqual(["find", "grep", "ls", "read", "workflow"]);
      expect(toolsOf("List every claim")).toEqual(["find", "grep", "ls", "read", "workflow"]);
      expect(toolsOf("Update the documentation")).toEqual([
        "edit",
        "find",
        "grep",
        "ls",
        "read",
        "workflow",
        "write",
      ]);
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "sends an unbacked claim back to the update step once with the finding, then ends blocked",
    async () => {
      const repo = repository();
      const { view } = await run(repo, [
        "autodoc",
        "--input-json",
        JSON.stringify({ task: "the unbackable option" }),
      ]);
      expect(view.output.value).toMatchObject({
        status: "blocked",
        reason: "After 2 rounds the documentation still makes claims the code does not back.",
        unbacked: [
          { document: "README.md", claim: "runs up to retries times", problem: "retry.ts ignores it" },
        ],
      });
      const updates = model.requests.filter(
        (r) =>
          firstUserText(r).includes("the unbackable option") &&
          firstUserText(r).includes("Update the documentation"),
      );
      const prompts = [...new Set(updates.map(firstUserText))];
      expect(prompts).toHaveLength(2);
      expect(prompts[1]).toContain('README.md: "runs up to retries times" — retry.ts ignores it');
    },
    SLOW,
  );

  it(
    "adopts the worktree after the worker is killed right after git made it, instead of making a second one",
    async () => {
      const repo = repository();
      // A host of its own: the workers inherit the crash hook from the host that starts them.
      const crashHome = makeHome();
      homes.push(crashHome);
      const { runId, view } = await run(
        repo,
        ["autodoc", "the", "new", "retry", "option"],
        {
          PIW_WORKER_CRASH_AT: "after-effect",
          PIW_WORKER_CRASH_ONCE_FILE: join(repo, "..", "crashed-once"),
        },
        crashHome,
      );
      expect(readFileSync(join(repo, "..", "crashed-once"), "utf8")).toBeDefined();
      expect(view.output.value).toMatchObject({ status: "ready", workspace: { branch: `piw/${runId}` } });
      expect(branches(repo)).toEqual(["main", `piw/${runId}`]);
      expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(2);
      // The relaunch found the branch git made before the kill, marked with this request, and took it.
      const host = await connectHost({ stateDir: crashHome, client: "test" });
      try {
        const history = await host.call("runs.history", { runId });
        const prepared = history?.steps.find((step) => step.path === "worktree");
        expect(prepared?.output).toMatchObject({ branch: `piw/${runId}`, adopted: true });
      } finally {
        host.close();
      }
    },
    SLOW,
  );

  it(
    "gives autodoc's workspace its own identity when a parent that prepares one includes it",
    async () => {
      const repo = repository();
      mkdirSync(join(repo, ".pi", "workflows"), { recursive: true });
      writeFileSync(join(repo, ".git", "info", "exclude"), ".pi/\n");
      writeFileSync(
        join(repo, ".pi", "workflows", "ship.workflow.ts"),
        `import { builtinWorkflow, defineWorkflow, includeWorkflow, type ScopeContext, workspace } from "piw";
import { z } from "zod";

type Input = { task: string };

export default defineWorkflow({
  name: "ship",
  input: z.object({ task: z.string() }),
  textInput: "task",
  startAt: "prepare",
  includes: {
    docs: includeWorkflow(builtinWorkflow("autodoc"), {
      input: ({ input }: ScopeContext<Input>) => ({ task: input.task }),
    }),
  },
  nodes: { prepare: workspace({ mode: "branch" }) },
  edges: { prepare: { to: "docs" }, "docs.ready": { to: "done" }, "docs.blocked": { to: "done" } },
});
`,
      );
      const { runId, view } = await run(repo, ["ship", "the", "new", "retry", "option"]);
      expect(view.status).toBe("done");
      // Two workspace effects, two branches: the parent's, and the included autodoc's with its scope.
      expect(branches(repo)).toEqual(["main", `piw/${runId}`, `piw/${runId}-docs`]);
      expect(view.output.value).toMatchObject({
        status: "ready",
        workspace: { branch: `piw/${runId}-docs`, mode: "worktree" },
      });
    },
    SLOW,
  );
});
