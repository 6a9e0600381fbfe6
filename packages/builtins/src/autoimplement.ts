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
  type NodeContext,
  parallel,
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
  checksInputSchema,
  DETECT_FACTS,
  detectChecks,
  givenChecks,
  parseFacts,
  runCheck,
} from "./autoimplement-checks.js";
import {
  afterChange,
  type Ledger,
  ledgerSchema,
  recordChange,
  verdictSchema,
  judgeChecks,
} from "./autoimplement-ledger.js";
import {
  askedPlan,
  EXISTING_FILES,
  type FoundPlan,
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
  type Where,
} from "./autoimplement-prompts.js";
import { changeRecord, findingOutcomes, type ReportedFinding } from "./autoimplement-report.js";
import {
  type Lens,
  LENSES,
  reviewer,
  reviewSchema,
  triage,
  type Triage,
  triageSchema,
} from "./autoimplement-review.js";
import { defaultPlanPath, utcDay } from "./autoplan-plan-file.js";
import autoplan from "./autoplan.js";
import { refSchema } from "./repo-scripts.js";

/** The implement and fix steps may take long: the user can talk to the model between its turns. */
const CHANGE_TIMEOUT_MS = 2 * 60 * 60_000;
const CHANGE_TOOLS = ["read", "grep", "find", "ls", "edit", "write", "bash"] as const;
const DIFF_MAX_CHARS = 32_000;

const inputSchema = z.object({
  /** A plan file's path, or the task to plan first: the free words of `/workflow autoimplement <words>`. */
  task: z.string().trim().min(1).max(8000),
  /** The plan file to implement, when the task is not one; relative to the run's folder. */
  plan: z.string().trim().min(1).max(500).optional(),
  /** The ref the run's branch starts from; default the current branch. */
  baseBranch: refSchema.optional(),
  /** Where to work: a new worktree beside the repository (default), or a new branch in the checkout. */
  workspace: z.enum(["worktree", "branch"]).default("worktree"),
  /** The commands that check the change; detected from the repository when left out. */
  checks: checksInputSchema.optional(),
  /** The plan's approval gate when autoimplement plans first (autoplan's `approval`). */
  approval: z.enum(["required", "auto", "skip"]).default("auto"),
  /** Rounds of fixing failed checks, and of fixing P0/P1 review findings, before the run stops. */
  maxRounds: z.number().int().min(1).max(10).default(3),
  merge: z.boolean().default(false),
  publish: z.boolean().default(false),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success)
    throw new WorkflowError("autoimplement: an earlier step's output has an unexpected shape.");
  return result.data;
}

const workspaceSchema = z.object({ path: z.string(), branch: z.string(), baseCommit: z.string() });
type Workspace = z.infer<typeof workspaceSchema>;

function workspaceOf(ctx: { outputs: Record<string, unknown> }): Workspace {
  const { path, branch, baseCommit } = parsed(workspaceSchema, ctx.outputs.worktree ?? ctx.outputs.branch);
  return { path, branch, baseCommit };
}

const whereOf = (ctx: { outputs: Record<string, unknown> }): Where => workspaceOf(ctx);

/** The plan the run works from: the one it was given, or the one autoplan wrote. */
function planOf(ctx: { outputs: Record<string, unknown> }): FoundPlan {
  const plan = parsed(planFileSchema, ctx.outputs.written ?? ctx.outputs.locate);
  if (plan.status !== "found") throw new WorkflowError("autoimplement: there is no plan to work from.");
  return plan;
}

const targetSchema = z.object({ path: z.string() });
/** autoplan's result, as far as autoimplement reads it. */
const plannedSchema = z.object({ status: z.string() });

const ledgerOf = (ctx: Ctx): Ledger | undefined =>
  ctx.outputs.record === undefined ? undefined : parsed(ledgerSchema, ctx.outputs.record);
const triageOf = (ctx: Ctx): Triage | undefined =>
  ctx.outputs.triage === undefined ? undefined : parsed(triageSchema, ctx.outputs.triage);

/** The change so far, as the reviewers and the commit message see it. */
function changesText(ledger: Ledger | undefined): string {
  const entries = changeRecord(ledger);
  if (entries.length === 0) return "(no change reported)";
  return entries
    .map((entry) => `${entry.step}: ${entry.summary}\n${entry.files.map((file) => `  ${file}`).join("\n")}`)
    .join("\n");
}

const diffSchema = z.object({ text: z.string(), truncated: z.boolean() });

/** The review rounds so far, each with what became of its findings. */
const reviewedSchema = z.custom<{ rounds: Triage[]; reported: ReportedFinding[] }>(
  (value) => typeof value === "object" && value !== null,
);

function reviewerInput(lens: Lens) {
  return ({ outputs }: ScopeContext<Input>) => {
    const diff = parsed(diffSchema, outputs.diff);
    const plan = planOf({ outputs });
    return {
      lens,
      root: workspaceOf({ outputs }).path,
      plan: plan.text.slice(0, 16_000),
      changes: changesText(outputs.record === undefined ? undefined : parsed(ledgerSchema, outputs.record)),
      diff: diff.text,
      diffTruncated: diff.truncated,
    };
  };
}

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

function commitMessage(ctx: Ctx): string {
  const plan = planOf(ctx);
  const ledger = ledgerOf(ctx);
  const files = [
    ...new Set((ledger?.entries ?? []).flatMap((entry) => entry.files.map((file) => file.path))),
  ];
  const summary = ledger?.entries.find((entry) => entry.step === "implement")?.summary ?? ctx.input.task;
  return [
    plan.title,
    "",
    summary,
    "",
    `Plan: ${plan.path}`,
    ...(files.length > 0 ? ["", ...files.map((f) => `- ${f}`)] : []),
  ].join("\n");
}

function report(ctx: Ctx, status: "committed" | "blocked", reason: string | null) {
  const verdict = ctx.outputs.verdict === undefined ? undefined : parsed(verdictSchema, ctx.outputs.verdict);
  const reviewed =
    ctx.outputs.reviewed === undefined ? undefined : parsed(reviewedSchema, ctx.outputs.reviewed);
  const findings = reviewed?.reported ?? [];
  const bySeverity = { P0: 0, P1: 0, P2: 0, P3: 0 };
  for (const finding of findings) bySeverity[finding.severity] += 1;
  const made = ctx.outputs.worktree ?? ctx.outputs.branch;
  const commit = ctx.outputs.commit === undefined ? null : parsed(commitSchema, ctx.outputs.commit);
  return {
    status: status === "committed" && commit?.commit === null ? ("nothing to commit" as const) : status,
    reason,
    task: ctx.input.task,
    plan: summaryOfPlan(ctx),
    workspace: made === undefined ? null : workspaceOf(ctx),
    changes: changeRecord(ledgerOf(ctx)),
    checks: verdict?.runs ?? [],
    findings: { bySeverity, list: findings },
    commit,
    publish: ctx.input.publish
      ? "not available in this version: push and open the pull request yourself"
      : null,
  };
}

const commitSchema = z.object({
  root: z.string(),
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  files: z.array(z.string()),
  adopted: z.boolean(),
});

function summaryOfPlan(ctx: Ctx): { path: string; digest: string; title: string } | null {
  const saved = ctx.outputs.written ?? ctx.outputs.locate;
  if (saved === undefined) return null;
  const plan = parsed(planFileSchema, saved);
  return plan.status === "found" ? { path: plan.path, digest: plan.digest, title: plan.title } : null;
}

function stopReason(ctx: Ctx): string {
  const located = parsed(planFileSchema, ctx.outputs.locate);
  if (located.status === "missing") return `The plan file ${located.asked} does not exist.`;
  if (located.status === "too_large")
    return `The plan file ${located.asked} is larger than autoimplement reads.`;
  const ledger = ledgerOf(ctx);
  if (ledger?.last.status === "blocked")
    return `Blocked, and still blocked when challenged: ${ledger.last.blocker ?? ""}`;
  const verdict = ctx.outputs.verdict === undefined ? undefined : parsed(verdictSchema, ctx.outputs.verdict);
  if (verdict?.next === "stop")
    return `Checks still fail after ${ctx.input.maxRounds} fix rounds: ${verdict.failing.map((c) => c.name).join(", ")}.`;
  if (triageOf(ctx)?.next === "stop")
    return `Reviewers still report P0/P1 findings after ${ctx.input.maxRounds} fix rounds.`;
  return "Planning stopped before a plan was written (see the plan step).";
}

/** The base the input names; left out, the workspace starts from the current branch. */
const baseBranchOf = ({ input }: ActionContext<Input>): string | undefined => input.baseBranch;

/** Checks that run at once: two keep a slow suite from starving a quick lint, without fighting over the CPU. */
const CHECK_CONCURRENCY = 2;

const LENS_NAMES = Object.keys(LENSES) as Lens[];

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
    worktree: workspace({ mode: "worktree", title: "Prepare a worktree", base: baseBranchOf }),
    branch: workspace({ mode: "branch", title: "Prepare a branch", base: baseBranchOf }),
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
    diff: shell({
      title: "The change's diff",
      exec: (ctx: Ctx) => [
        "sh",
        "-c",
        `git add --all --intent-to-add && git diff --no-color "$1" | head -c ${DIFF_MAX_CHARS + 1}`,
        "autoimplement",
        workspaceOf(ctx).baseCommit,
      ],
      parse: ({ stdout }) => ({
        text: stdout.slice(0, DIFF_MAX_CHARS),
        truncated: stdout.length > DIFF_MAX_CHARS,
      }),
      timeoutMs: 60_000,
    }),
    review: parallel({
      title: "Review",
      branches: {
        correctness: includeWorkflow(reviewer, { input: reviewerInput("correctness") }),
        tests: includeWorkflow(reviewer, { input: reviewerInput("tests") }),
        "docs-scope": includeWorkflow(reviewer, { input: reviewerInput("docs-scope") }),
      },
      join: "all",
    }),
    triage: compute({
      title: "Findings by severity",
      run: (ctx: Ctx): Triage => {
        const joined = parsed(z.record(z.string(), reviewSchema), ctx.outputs.review);
        const reviews = Object.fromEntries(
          LENS_NAMES.flatMap((lens) => (joined[lens] ? [[lens, joined[lens]]] : [])),
        );
        return triage(reviews, (triageOf(ctx)?.round ?? 0) + 1, ctx.input.maxRounds);
      },
    }),
    reviewed: compute({
      title: "What became of the findings",
      run: (ctx: Ctx) => {
        const round = parsed(triageSchema, ctx.outputs.triage);
        const before =
          ctx.outputs.reviewed === undefined ? undefined : parsed(reviewedSchema, ctx.outputs.reviewed);
        return {
          rounds: [...(before?.rounds ?? []), round],
          reported: [...(before?.reported ?? []), ...findingOutcomes(round)],
        };
      },
    }),
    commit: action({
      title: "Commit on the run's branch",
      timeoutMs: 5 * 60_000,
      run: (ctx: ActionContext<Input>) =>
        commitChanges(ctx.effects, { path: workspaceOf(ctx).path, message: commitMessage(ctx) }),
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
    commit: { to: "summary" },
    summary: { to: "done" },
    stop: { to: "blocked" },
  },
  presentationPrompt:
    "Say whether the change was committed or why it stopped. Then list the checks that ran with their results, " +
    "the review findings by severity with what became of each, and the branch, workspace and commit. Quote the " +
    "result; add nothing of your own.",
});
