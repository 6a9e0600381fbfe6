import {
  type ActionContext,
  action,
  agent,
  commitChanges,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  map,
  type ScopeContext,
  shell,
  WorkflowError,
  workspace,
} from "piw";
import { z } from "zod";
import autodoc from "./autodoc.js";
import {
  type CheckResult,
  checkResultSchema,
  checkSchema,
  DETECT_FACTS,
  detectChecks,
  givenChecks,
  parseFacts,
  runCheck,
} from "./autoimplement-checks.js";
import {
  type Ctx,
  commitSchema,
  type Input,
  inputSchema,
  ledgerOf,
  type PublishOutcome,
  parsed,
  planOf,
  plannedSchema,
  type publishedSchema,
  pullRequestSchema,
  targetSchema,
  triageOf,
  whereOf,
  workspaceOf,
} from "./autoimplement-context.js";
import {
  afterChange,
  type Ledger,
  judgeChecks,
  recordChange,
  verdictSchema,
} from "./autoimplement-ledger.js";
import {
  askedPlan,
  EXISTING_FILES,
  namedDocuments,
  parsePlanFile,
  planFileSchema,
  READ_PLAN,
} from "./autoimplement-plan.js";
import {
  type Change,
  changeSchema,
  challengePrompt,
  checkChange,
  fixChecksPrompt,
  fixFindingsPrompt,
  IMPLEMENTER_SYSTEM_PROMPT,
  implementPrompt,
} from "./autoimplement-prompts.js";
import publish from "./autoimplement-publish.js";
import { reviewStage } from "./autoimplement-review-stage.js";
import { commitMessage, publishInput, report, safeJson, stopReason } from "./autoimplement-summary.js";
import { defaultPlanPath, utcDay } from "./autoplan-plan-file.js";
import autoplan from "./autoplan.js";

/** The implement and fix steps may take long: the user can talk to the model between its turns. */
const CHANGE_TIMEOUT_MS = 2 * 60 * 60_000;
const CHANGE_TOOLS = ["read", "grep", "find", "ls", "edit", "write", "bash"] as const;

const changeStep = (title: string, prompt: (ctx: Ctx) => string) =>
  agent({
    title,
    statusDetail: (ctx: Ctx) => `${title.toLowerCase()} on ${workspaceOf(ctx).branch}`,
    systemPrompt: IMPLEMENTER_SYSTEM_PROMPT,
    tools: CHANGE_TOOLS,
    timeoutMs: CHANGE_TIMEOUT_MS,
    prompt,
    output: changeSchema,
    validate: checkChange,
  });

const publishedNode = (outcome: PublishOutcome) =>
  compute({ title: `Publishing ${outcome}`, run: (): z.infer<typeof publishedSchema> => ({ outcome }) });

/** The base the input names; left out, the workspace starts from the current branch. */
const baseBranchOf = ({ input }: ActionContext<Input>): string | undefined => input.baseBranch;
const branchNameOf = ({ input }: ActionContext<Input>): string | undefined => input.branch;

/** Checks that run at once: two keep a slow suite from starving a quick lint, without fighting over the CPU. */
const CHECK_CONCURRENCY = 2;

/**
 * autoimplement: from a plan (or a task it plans first) to a reviewed commit on the run's own
 * branch — documents first, the change in the conversation, checks with bounded fix rounds, isolated
 * reviewers whose P0/P1 findings go back to fix, and a summary of everything that was run and found.
 */
export default defineWorkflow({
  name: "autoimplement",
  title: "Implement a plan",
  summary:
    "Implement a plan (or plan a task first) on the run's own branch: documents first, then the change, the checks with fix rounds, an isolated review and a commit.",
  input: inputSchema,
  textInput: "task",
  startAt: "locate",
  exits: ["done", "blocked"],
  maxSteps: 2000,
  includes: {
    planning: includeWorkflow(autoplan, {
      title: "Plan the task first",
      input: ({ input, outputs }: ScopeContext<Input>) => ({
        problem: input.task,
        approval: input.approval,
        planFile: parsed(targetSchema, outputs.target).path,
      }),
    }),
    publishing: includeWorkflow(publish, {
      title: "Publish the branch as a pull request",
      input: publishInput,
    }),
    documentation: includeWorkflow(autodoc, {
      title: "Bring the documents in line with the plan",
      input: ({ input, outputs }: ScopeContext<Input>) => {
        const plan = planOf({ outputs });
        const ws = workspaceOf({ outputs });
        return {
          task: input.task.slice(0, 4000),
          plan: plan.path,
          documents: parsed(z.array(z.string()), outputs.documents),
          workspace: "branch" as const,
          from: ws.path,
          base: ws.baseCommit,
        };
      },
    }),
  },
  nodes: {
    locate: shell({
      title: "Find the plan",
      exec: ({ input }: Ctx) => ["sh", "-c", READ_PLAN, "autoimplement", askedPlan(input.task, input.plan)],
      parse: ({ stdout }, { input }: Ctx) => {
        const asked = askedPlan(input.task, input.plan);
        return asked === "" ? { status: "none" as const, asked } : parsePlanFile(stdout, asked, input.task);
      },
      timeoutMs: 60_000,
    }),
    where: decision({
      title: "Worktree or branch",
      choices: ["worktree", "branch"],
      decide: ({ input }: Ctx) => input.workspace,
    }),
    worktree: workspace({
      mode: "worktree",
      title: "Prepare a worktree",
      base: baseBranchOf,
      branch: branchNameOf,
    }),
    branch: workspace({
      mode: "branch",
      title: "Prepare a branch",
      base: baseBranchOf,
      branch: branchNameOf,
    }),
    "has-plan": decision({
      title: "Plan given or to write",
      choices: ["given", "plan"],
      decide: (ctx: Ctx) =>
        parsed(planFileSchema, ctx.outputs.locate).status === "found" ? "given" : "plan",
    }),
    target: compute({
      title: "Where the plan goes",
      // Fixed once: a later day of the same run keeps the same plan file.
      run: (ctx: Ctx) => ({
        path: `${workspaceOf(ctx).path}/${defaultPlanPath(utcDay(new Date()), ctx.input.task)}`,
      }),
    }),
    written: shell({
      title: "Read the plan",
      exec: (ctx: Ctx) => [
        "sh",
        "-c",
        READ_PLAN,
        "autoimplement",
        parsed(targetSchema, ctx.outputs.target).path,
      ],
      parse: ({ stdout }, ctx: Ctx) =>
        parsePlanFile(stdout, parsed(targetSchema, ctx.outputs.target).path, ctx.input.task),
      timeoutMs: 60_000,
    }),
    documents: shell({
      title: "Documents the plan names",
      exec: (ctx: Ctx) => {
        const plan = planOf(ctx);
        return ["sh", "-c", EXISTING_FILES, "autoimplement", ...namedDocuments(plan.text, plan.path)];
      },
      parse: ({ stdout }) => stdout.split("\n").filter((line) => line.trim() !== ""),
      timeoutMs: 60_000,
    }),
    "docs-first": decision({
      title: "Documents first?",
      choices: ["documents", "implement"],
      decide: (ctx: Ctx) =>
        parsed(z.array(z.string()), ctx.outputs.documents).length > 0 ? "documents" : "implement",
    }),
    // autodoc switched the workspace to its own branch; the change goes on the run's branch.
    rejoin: shell({
      title: "Back to the run's branch",
      exec: (ctx: Ctx) => ["git", "switch", "--quiet", workspaceOf(ctx).branch],
      timeoutMs: 60_000,
    }),
    implement: changeStep("Implement", (ctx) => implementPrompt(whereOf(ctx), planOf(ctx))),
    fix: changeStep("Fix", (ctx) => {
      const verdict =
        ctx.outputs.verdict === undefined ? undefined : parsed(verdictSchema, ctx.outputs.verdict);
      // Triage runs only after passing checks, so failing checks newer than it are the reason for this fix.
      if (verdict?.next === "fix") return fixChecksPrompt(whereOf(ctx), verdict.failing);
      const round = triageOf(ctx);
      return fixFindingsPrompt(whereOf(ctx), round?.toFix ?? [], round?.next === "polish");
    }),
    challenge: changeStep("Challenge the blocker", (ctx) => {
      const ledger = ledgerOf(ctx);
      if (ledger === undefined) throw new WorkflowError("autoimplement: nothing to challenge.");
      return challengePrompt(whereOf(ctx), ledger.last satisfies Change);
    }),
    record: compute({
      title: "Record the change",
      run: (ctx: Ctx): Ledger =>
        recordChange(ledgerOf(ctx), {
          implement: ctx.outputs.implement,
          fix: ctx.outputs.fix,
          challenge: ctx.outputs.challenge,
        }),
    }),
    detect: shell({
      title: "Find the checks",
      exec: ["sh", "-c", DETECT_FACTS],
      parse: ({ stdout }, { input }: Ctx) => {
        if (input.checks !== undefined) return givenChecks(input.checks);
        const { facts, configs } = parseFacts(stdout);
        return detectChecks(facts, configs);
      },
      timeoutMs: 60_000,
    }),
    verify: map({
      title: "Run the checks",
      over: ({ outputs }: { outputs: Record<string, unknown> }) =>
        parsed(z.array(checkSchema), outputs.detect),
      branch: runCheck,
      concurrency: CHECK_CONCURRENCY,
      maxItems: 20,
    }),
    verdict: compute({
      title: "Checks pass?",
      run: (ctx: Ctx) =>
        judgeChecks(
          parsed(z.array(checkResultSchema), ctx.outputs.verify) satisfies CheckResult[],
          ctx.outputs.verdict === undefined ? undefined : parsed(verdictSchema, ctx.outputs.verdict),
          triageOf(ctx),
          ctx.input.maxRounds,
        ),
    }),
    ...reviewStage,
    commit: action({
      title: "Commit on the run's branch",
      timeoutMs: 5 * 60_000,
      run: (ctx: ActionContext<Input>) =>
        commitChanges(ctx.effects, { path: workspaceOf(ctx).path, message: commitMessage(ctx) }),
    }),
    deliver: decision({
      title: "Publish or not",
      choices: ["publish", "keep"],
      decide: (ctx: Ctx) =>
        ctx.input.publish && parsed(commitSchema, ctx.outputs.commit).commit !== null ? "publish" : "keep",
    }),
    "publish-published": publishedNode("published"),
    "publish-merged": publishedNode("merged"),
    "publish-skipped": publishedNode("skipped"),
    "publish-failed": publishedNode("failed"),
    "pull-request": shell({
      title: "The branch's pull request",
      exec: (ctx: Ctx) => [
        "sh",
        "-c",
        'command -v gh >/dev/null 2>&1 || exit 0\ngh pr view "$1" --json number,url,state 2>/dev/null || true',
        "autoimplement",
        workspaceOf(ctx).branch,
      ],
      parse: ({ stdout }) => {
        const found = pullRequestSchema.safeParse(safeJson(stdout));
        return found.success ? found.data : null;
      },
      timeoutMs: 60_000,
    }),
    summary: compute({ title: "Summary", run: (ctx: Ctx) => report(ctx, "committed", null) }),
    stop: compute({ title: "Stopped", run: (ctx: Ctx) => report(ctx, "blocked", stopReason(ctx)) }),
  },
  edges: {
    locate: {
      to: ["where", "stop"],
      route: (plan) => (plan.status === "found" || plan.status === "none" ? "where" : "stop"),
    },
    where: decisionEdge({ worktree: "worktree", branch: "branch" }),
    worktree: { to: "has-plan" },
    branch: { to: "has-plan" },
    "has-plan": decisionEdge({ given: "documents", plan: "target" }),
    target: { to: "planning" },
    "planning.done": {
      to: ["written", "stop"],
      route: (result) => (parsed(plannedSchema, result).status === "blocked" ? "stop" : "written"),
    },
    written: {
      to: ["documents", "stop"],
      route: (plan) => (plan.status === "found" ? "documents" : "stop"),
    },
    documents: { to: "docs-first" },
    "docs-first": decisionEdge({ documents: "documentation", implement: "implement" }),
    "documentation.ready": { to: "rejoin" },
    "documentation.blocked": { to: "rejoin" },
    rejoin: { to: "implement" },
    implement: { to: "record" },
    fix: { to: "record" },
    challenge: { to: "record" },
    record: { to: ["detect", "verify", "challenge", "stop"], route: afterChange },
    detect: { to: "verify" },
    verify: { to: "verdict" },
    verdict: {
      to: ["fix", "diff", "commit", "stop"],
      route: (verdict) => (verdict.next === "review" ? "diff" : verdict.next),
    },
    diff: { to: "review" },
    review: { to: "triage" },
    triage: { to: "reviewed" },
    reviewed: {
      to: ["fix", "commit", "stop"],
      route: (out) => {
        const next = out.rounds.at(-1)?.next ?? "stop";
        return next === "polish" ? "fix" : next;
      },
    },
    commit: { to: "deliver" },
    deliver: decisionEdge({ publish: "publishing", keep: "summary" }),
    "publishing.published": { to: "publish-published" },
    "publishing.merged": { to: "publish-merged" },
    "publishing.skipped": { to: "publish-skipped" },
    "publishing.failed": { to: "publish-failed" },
    "publish-published": { to: "pull-request" },
    "publish-merged": { to: "pull-request" },
    "publish-skipped": { to: "pull-request" },
    "publish-failed": { to: "pull-request" },
    "pull-request": { to: "summary" },
    summary: { to: "done" },
    stop: { to: "blocked" },
  },
  presentationPrompt:
    "Say whether the change was committed or why it stopped. Then list the checks that ran with their results, " +
    "the review findings by severity with what became of each, and the branch, workspace and commit; when it " +
    "was published, the pull request and how publishing ended. Quote the result; add nothing of your own.",
});
