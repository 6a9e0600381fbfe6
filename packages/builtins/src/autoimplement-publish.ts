import {
  type ActionContext,
  action,
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  type NodeContext,
  shell,
  textDigest,
  WorkflowError,
  wait,
} from "piw";
import { z } from "zod";
import { fixCommitMessage, fixPrompt } from "./autoimplement-publish-prompts.js";
import {
  actionsRunId,
  CHECK_FIELDS,
  type Checks,
  checkLogSchema,
  checksSchema,
  commitSchema,
  FAILED_LOGS,
  GH_READY,
  MAX_LOGGED_CHECKS,
  type PullRequest,
  parseChecks,
  parseFailedLogs,
  parseGhReady,
  parseOpenPr,
  prNumberOf,
  prSchema,
  pushSchema,
} from "./autoimplement-publish-scripts.js";
import { refSchema } from "./repo-scripts.js";

const FIX_TOOLS = ["read", "grep", "find", "ls", "edit", "write", "bash"] as const;

const inputSchema = z.object({
  /** The repository folder, relative to the run's workspace (or the run's folder); default that folder. */
  cwd: z.string().min(1).max(1000).optional(),
  /** The branch to publish: it must exist locally; it is pushed to `remote` under the same name. */
  branch: refSchema,
  /** The branch the PR merges into. */
  baseBranch: refSchema,
  title: z.string().trim().min(1).max(256),
  body: z.string().max(60_000).default(""),
  /** Merge the PR once its checks pass. */
  merge: z.boolean().default(false),
  mergeMethod: z.enum(["merge", "squash", "rebase"]).default("merge"),
  /** How many times failing checks go to a fix step before the publish gives up. */
  maxRounds: z.number().int().min(0).max(10).default(3),
  remote: z
    .string()
    .max(100)
    .regex(/^\w[\w.-]*$/, "a git remote name such as origin")
    .default("origin"),
  /** The durable wait between two looks at pending checks. */
  pollSeconds: z.number().int().min(1).max(3600).default(60),
  /** The most looks at pending checks in all, before the publish gives up waiting. */
  maxPolls: z.number().int().min(1).max(1000).default(120),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success) throw new WorkflowError("publish: an earlier step's output has an unexpected shape.");
  return result.data;
}

const execIn = (ctx: Ctx) => (ctx.input.cwd === undefined ? {} : { cwd: ctx.input.cwd });

/** A script run in the repository folder, with its arguments. */
const inFolder = (ctx: Ctx, script: string, args: readonly string[]): string[] => [
  "sh",
  "-c",
  `cd "$1" || exit 97\nshift\n${script}`,
  "publish",
  ctx.input.cwd ?? ".",
  ...args,
];

const prOf = (ctx: Ctx): PullRequest => parsed(prSchema, ctx.outputs.pr);
const checksOf = (ctx: Ctx): Checks => parsed(checksSchema, ctx.outputs.checks);
const failingOf = (ctx: Ctx) =>
  checksOf(ctx).checks.filter((check) => check.bucket === "fail" || check.bucket === "cancel");
const roundsOf = (ctx: Ctx): number =>
  ctx.outputs.commit === undefined ? 0 : parsed(commitSchema, ctx.outputs.commit).round;

/** The branch's commit, and the repository root the fix step is told about. */
async function branchHead(ctx: ActionContext<Input>): Promise<{ commit: string; root: string }> {
  const head = await ctx.exec(
    ["git", "rev-parse", "--verify", "--quiet", `refs/heads/${ctx.input.branch}^{commit}`],
    execIn(ctx),
  );
  if (head.exitCode !== 0) {
    throw new WorkflowError("The branch to publish does not exist in the repository; nothing to push.");
  }
  const root = await ctx.exec(["git", "rev-parse", "--show-toplevel"], execIn(ctx));
  return { commit: head.stdout, root: root.stdout };
}

async function push(ctx: ActionContext<Input>) {
  const { branch, remote } = ctx.input;
  const { commit, root } = await branchHead(ctx);
  const request = { remote, branch, commit };
  // Pushing the same commit again is harmless, so a crash mid-push simply pushes again.
  await ctx.effects.idempotent("git.push", request, async () => {
    const pushed = await ctx.exec(
      ["git", "push", "--quiet", remote, `refs/heads/${branch}:refs/heads/${branch}`],
      execIn(ctx),
    );
    if (pushed.exitCode !== 0) {
      throw new WorkflowError(`git push of the branch failed (exit ${pushed.exitCode}).`);
    }
    return request;
  });
  return { ...request, root, round: ctx.node.visit - 1 };
}

/**
 * Open the PR, or take the one already open for this branch and base: after a crash between
 * `gh pr create` and the saved result, the retry finds the PR its first attempt opened.
 */
async function openOrReuse(ctx: ActionContext<Input>): Promise<PullRequest> {
  const { branch, baseBranch, title, body } = ctx.input;
  const request = { branch, base: baseBranch, title, body: textDigest(body) };
  return ctx.effects.idempotent("github.pr", request, async () => {
    const gh = (args: string[]) => ctx.exec(["gh", ...args], execIn(ctx));
    const list = await gh([
      "pr",
      "list",
      "--head",
      branch,
      "--base",
      baseBranch,
      "--state",
      "open",
      "--json",
      "number,url",
      "--limit",
      "1",
    ]);
    if (list.exitCode !== 0) throw new WorkflowError(`gh pr list failed (exit ${list.exitCode}).`);
    const open = parseOpenPr(list.stdout);
    if (open !== null) return { ...open, reused: true };
    const made = await gh([
      "pr",
      "create",
      "--head",
      branch,
      "--base",
      baseBranch,
      "--title",
      title,
      "--body",
      body,
    ]);
    if (made.exitCode !== 0) throw new WorkflowError(`gh pr create failed (exit ${made.exitCode}).`);
    const url = made.stdout.split("\n").findLast((line) => line.startsWith("http")) ?? "";
    const number = prNumberOf(url);
    if (number === null) throw new WorkflowError("gh pr create did not print the new PR's URL.");
    return { number, url: url.trim(), reused: false };
  });
}

/** Commit what the fix step changed, on the branch; a retry after the commit finds nothing new. */
const COMMIT = `[ "$(git symbolic-ref --quiet --short HEAD)" = "$2" ] || exit 5
git add -A || exit 3
if git diff --cached --quiet; then echo "same $(git rev-parse HEAD)"; exit 0; fi
git commit --quiet -m "$1" || exit 4
echo "new $(git rev-parse HEAD)"`;

const COMMIT_PROBLEMS: Record<number, string> = {
  5: "The repository folder is not on the branch being published, so the fix cannot be committed to it.",
  3: "git add failed in the repository.",
  4: "git commit of the fix failed (is a git user name and email set?).",
};

async function commitFix(ctx: ActionContext<Input>) {
  const round = ctx.node.visit;
  const message = fixCommitMessage(
    round,
    failingOf(ctx).map((check) => check.name),
  );
  const request = { branch: ctx.input.branch, round, message };
  return ctx.effects.idempotent("git.commit", request, async () => {
    const made = await ctx.exec(["sh", "-c", COMMIT, "publish", message, ctx.input.branch], execIn(ctx));
    if (made.exitCode !== 0) {
      throw new WorkflowError(COMMIT_PROBLEMS[made.exitCode] ?? `git commit failed (exit ${made.exitCode}).`);
    }
    const [how, commit] = made.stdout.trim().split(" ");
    return { commit: commit ?? "", committed: how === "new", round };
  });
}

/** Merge once; a retry that finds the PR merged (by its first attempt) takes that as done. */
async function mergePr(ctx: ActionContext<Input>) {
  const { number } = prOf(ctx);
  const method = ctx.input.mergeMethod;
  return ctx.effects.idempotent("github.pr.merge", { number, method }, async () => {
    const gh = (args: string[]) => ctx.exec(["gh", ...args], execIn(ctx));
    const view = await gh(["pr", "view", String(number), "--json", "state"]);
    if (view.exitCode === 0 && /"MERGED"/.test(view.stdout)) return { merged: true, adopted: true, method };
    const merged = await gh(["pr", "merge", String(number), `--${method}`]);
    if (merged.exitCode !== 0) {
      throw new WorkflowError(
        `gh pr merge failed (exit ${merged.exitCode}); the PR may need a review or be blocked by branch protection.`,
      );
    }
    return { merged: true, adopted: false, method };
  });
}

function checksSummary(ctx: Ctx) {
  const checks = checksOf(ctx);
  return { state: checks.state, names: checks.checks.map((check) => check.name) };
}

const published = (ctx: Ctx) => ({
  status: "published" as const,
  pr: prOf(ctx),
  branch: ctx.input.branch,
  checks: checksSummary(ctx),
  rounds: roundsOf(ctx),
});

const SKIP_NOTES = {
  missing: "Publishing was skipped: gh (the GitHub CLI) is not on PATH. Install it and run gh auth login.",
  unauthenticated: "Publishing was skipped: gh is not logged in (gh auth status failed). Run gh auth login.",
} as const;

/** Why the publish stopped: a step's saved failure, or the checks that never passed. */
function stopped(ctx: Ctx) {
  const failed = ["gh", "push", "pr", "checks", "logs", "fix", "commit", "merge"]
    .map((name) => ctx.failures[name])
    .find((failure) => failure !== undefined);
  const checks = ctx.outputs.checks === undefined ? null : checksOf(ctx);
  const reason =
    failed !== undefined
      ? failed.message
      : checks?.state === "pending"
        ? `The checks were still running after ${ctx.input.maxPolls} looks; see the PR.`
        : `The checks still failed after ${roundsOf(ctx)} fix rounds: ${failingOf(ctx)
            .map((check) => check.name)
            .join(", ")}.`;
  return {
    status: "failed" as const,
    reason: reason.slice(0, 1000),
    pr: ctx.outputs.pr === undefined ? null : prOf(ctx),
    branch: ctx.input.branch,
    checks: checks === null ? null : checksSummary(ctx),
    rounds: roundsOf(ctx),
  };
}

/**
 * autoimplement's publish: pushes a branch, opens (or reuses) its PR, watches its checks with durable
 * waits between looks (the run parks; no process sleeps), sends failing checks to a fix step with
 * their logs' tails and pushes the fix, at most `maxRounds` times, and merges only when asked and
 * green. Without an authenticated gh it skips with a note. autoimplement includes it; it is not a
 * listed built-in.
 */
export default defineWorkflow({
  name: "autoimplement-publish",
  title: "Publish a branch as a pull request",
  summary: "Push a branch, open or reuse its PR, fix failing checks and merge when asked.",
  input: inputSchema,
  startAt: "gh",
  exits: ["published", "merged", "skipped", "failed"],
  maxSteps: 5000,
  nodes: {
    gh: shell({
      title: "Is gh ready",
      exec: (ctx: Ctx) => inFolder(ctx, GH_READY, []),
      parse: ({ stdout }) => parseGhReady(stdout),
      timeoutMs: 60_000,
    }),
    skip: compute({
      title: "Skipped",
      run: (ctx: Ctx) => {
        const why = ctx.outputs.gh === "missing" ? "missing" : "unauthenticated";
        return { status: "skipped" as const, note: SKIP_NOTES[why], branch: ctx.input.branch };
      },
    }),
    push: action({ title: "Push the branch", run: push, timeoutMs: 5 * 60_000 }),
    pr: action({ title: "Open or reuse the PR", run: openOrReuse, timeoutMs: 2 * 60_000 }),
    checks: shell({
      title: "Look at the PR's checks",
      exec: (ctx: Ctx) =>
        inFolder(ctx, `gh pr checks "$1" --json ${CHECK_FIELDS}`, [String(prOf(ctx).number)]),
      // 0: passing, 8: pending, 1: failing or no checks (parseChecks tells them apart).
      okExitCodes: [0, 1, 8],
      parse: (report) => parseChecks(report),
      timeoutMs: 2 * 60_000,
      retry: { attempts: 3, backoff: { initialMs: 30_000 } },
    }),
    pending: decision({
      title: "Wait again or give up",
      choices: ["poll", "give-up"],
      decide: (ctx: Ctx) => (ctx.node.visit < ctx.input.maxPolls ? "poll" : "give-up"),
    }),
    poll: wait({
      title: "Wait before looking again",
      until: (ctx: Ctx) => new Date(Date.now() + ctx.input.pollSeconds * 1000),
    }),
    failing: decision({
      title: "Fix or give up",
      choices: ["fix", "give-up"],
      decide: (ctx: Ctx) => (ctx.node.visit <= ctx.input.maxRounds ? "fix" : "give-up"),
    }),
    logs: shell({
      title: "The failing checks' logs",
      exec: (ctx: Ctx) =>
        inFolder(
          ctx,
          FAILED_LOGS,
          failingOf(ctx)
            .slice(0, MAX_LOGGED_CHECKS)
            .flatMap((check) => [check.name, actionsRunId(check.link)]),
        ),
      parse: ({ stdout }) => parseFailedLogs(stdout),
      timeoutMs: 2 * 60_000,
    }),
    fix: agent({
      title: "Fix the failing checks",
      tools: FIX_TOOLS,
      timeoutMs: 60 * 60_000,
      statusDetail: (ctx: Ctx) =>
        failingOf(ctx)
          .map((check) => check.name)
          .join(", ")
          .slice(0, 200),
      prompt: (ctx: Ctx) =>
        fixPrompt({
          folder: parsed(pushSchema, ctx.outputs.push).root,
          branch: ctx.input.branch,
          pr: prOf(ctx),
          round: roundsOf(ctx) + 1,
          maxRounds: ctx.input.maxRounds,
          failing: failingOf(ctx).map((check) => check.name),
          logs: parsed(z.array(checkLogSchema), ctx.outputs.logs),
        }),
      output: z.object({
        summary: z.string().min(1).max(2000).describe("The cause of the failure and what you changed"),
        files: z.array(z.string().min(1).max(500)).max(100).describe("The files you changed"),
      }),
    }),
    commit: action({ title: "Commit the fix", run: commitFix, timeoutMs: 2 * 60_000 }),
    passed: decision({
      title: "Merge or leave open",
      choices: ["merge", "leave"],
      decide: (ctx: Ctx) => (ctx.input.merge ? "merge" : "leave"),
    }),
    merge: action({ title: "Merge the PR", run: mergePr, timeoutMs: 2 * 60_000 }),
    "report-published": compute({ title: "Published", run: published }),
    "report-merged": compute({
      title: "Merged",
      run: (ctx: Ctx) => ({ ...published(ctx), status: "merged" as const, method: ctx.input.mergeMethod }),
    }),
    stop: compute({ title: "Publishing failed", run: stopped }),
  },
  edges: {
    gh: { to: ["push", "skip"], route: (out) => (out === "ok" ? "push" : "skip"), onFailure: "stop" },
    skip: { to: "skipped" },
    push: {
      to: ["pr", "checks"],
      route: (out) => (parsed(pushSchema, out).round === 0 ? "pr" : "checks"),
      onFailure: "stop",
    },
    pr: { to: "checks", onFailure: "stop" },
    checks: {
      to: ["passed", "pending", "failing"],
      route: (out) => (out.state === "pending" ? "pending" : out.state === "failing" ? "failing" : "passed"),
      onFailure: "stop",
    },
    pending: decisionEdge({ poll: "poll", "give-up": "stop" }),
    poll: { to: "checks" },
    failing: decisionEdge({ fix: "logs", "give-up": "stop" }),
    logs: { to: "fix", onFailure: "stop" },
    fix: { to: "commit", onFailure: "stop" },
    commit: { to: "push", onFailure: "stop" },
    passed: decisionEdge({ merge: "merge", leave: "report-published" }),
    merge: { to: "report-merged", onFailure: "stop" },
    "report-published": { to: "published" },
    "report-merged": { to: "merged" },
    stop: { to: "failed" },
  },
  presentationPrompt:
    "Say whether the branch was published, merged, skipped or failed. Give the PR's number and URL, " +
    "the checks' final state and how many fix rounds ran; for skipped or failed, quote the note or " +
    "reason. Add nothing of your own.",
});
