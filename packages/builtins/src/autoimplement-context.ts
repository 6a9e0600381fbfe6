import { type NodeContext, WorkflowError } from "piw";
import { z } from "zod";
import { checksInputSchema } from "./autoimplement-checks.js";
import { type Ledger, ledgerSchema } from "./autoimplement-ledger.js";
import { type FoundPlan, planFileSchema } from "./autoimplement-plan.js";
import type { Where } from "./autoimplement-prompts.js";
import { changeRecord, type ReportedFinding } from "./autoimplement-report.js";
import { type Triage, triageSchema } from "./autoimplement-review.js";
import { refSchema } from "./repo-scripts.js";

// autoimplement's input, and typed readers of what its earlier nodes saved.

export const inputSchema = z.object({
  /** A plan file's path, or the task to plan first: the free words of `/workflow autoimplement <words>`. */
  task: z.string().trim().min(1).max(8000),
  /** The plan file to implement, when the task is not one; relative to the run's folder. */
  plan: z.string().trim().min(1).max(500).optional(),
  /** The ref the run's branch starts from; default the current branch. */
  baseBranch: refSchema.optional(),
  /** The run's branch; default `piw/<run id>` (a loop that includes autoimplement names each one). */
  branch: refSchema.optional(),
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
export type Input = z.output<typeof inputSchema>;
export type Ctx = NodeContext<Input>;

export function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success)
    throw new WorkflowError("autoimplement: an earlier step's output has an unexpected shape.");
  return result.data;
}

const workspaceSchema = z.object({
  path: z.string(),
  branch: z.string(),
  base: z.string(),
  baseCommit: z.string(),
});
export type Workspace = z.infer<typeof workspaceSchema>;

export function workspaceOf(ctx: { outputs: Record<string, unknown> }): Workspace {
  const { path, branch, base, baseCommit } = parsed(
    workspaceSchema,
    ctx.outputs.worktree ?? ctx.outputs.branch,
  );
  return { path, branch, base, baseCommit };
}

export const whereOf = (ctx: { outputs: Record<string, unknown> }): Where => workspaceOf(ctx);

/** The plan the run works from: the one it was given, or the one autoplan wrote. */
export function planOf(ctx: { outputs: Record<string, unknown> }): FoundPlan {
  const plan = parsed(planFileSchema, ctx.outputs.written ?? ctx.outputs.locate);
  if (plan.status !== "found") throw new WorkflowError("autoimplement: there is no plan to work from.");
  return plan;
}

export const targetSchema = z.object({ path: z.string() });
/** autoplan's result, as far as autoimplement reads it. */
export const plannedSchema = z.object({ status: z.string() });

export const ledgerOf = (ctx: Ctx): Ledger | undefined =>
  ctx.outputs.record === undefined ? undefined : parsed(ledgerSchema, ctx.outputs.record);
export const triageOf = (ctx: Ctx): Triage | undefined =>
  ctx.outputs.triage === undefined ? undefined : parsed(triageSchema, ctx.outputs.triage);

/** The change so far, as the reviewers and the commit message see it. */
export function changesText(ledger: Ledger | undefined): string {
  const entries = changeRecord(ledger);
  if (entries.length === 0) return "(no change reported)";
  return entries
    .map((entry) => `${entry.step}: ${entry.summary}\n${entry.files.map((file) => `  ${file}`).join("\n")}`)
    .join("\n");
}

export const diffSchema = z.object({ text: z.string(), truncated: z.boolean() });

/** The review rounds so far, each with what became of its findings. */
export const reviewedSchema = z.custom<{ rounds: Triage[]; reported: ReportedFinding[] }>(
  (value) => typeof value === "object" && value !== null,
);

const PUBLISH_OUTCOMES = ["published", "merged", "skipped", "failed"] as const;
export type PublishOutcome = (typeof PUBLISH_OUTCOMES)[number];
export const publishedSchema = z.object({ outcome: z.enum(PUBLISH_OUTCOMES) });
export const pullRequestSchema = z
  .object({ number: z.number(), url: z.string(), state: z.string() })
  .nullable();

export const commitSchema = z.object({
  root: z.string(),
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  files: z.array(z.string()),
  adopted: z.boolean(),
});
