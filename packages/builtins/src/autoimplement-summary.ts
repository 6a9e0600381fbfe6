import type { ScopeContext } from "piw";
import {
  type Ctx,
  changesText,
  commitSchema,
  type Input,
  ledgerOf,
  parsed,
  planOf,
  publishedSchema,
  pullRequestSchema,
  reviewedSchema,
  triageOf,
  workspaceOf,
} from "./autoimplement-context.js";
import { type CheckRun, ledgerSchema, verdictSchema } from "./autoimplement-ledger.js";
import { planFileSchema } from "./autoimplement-plan.js";
import { changeRecord } from "./autoimplement-report.js";

// What autoimplement commits, publishes and ends with, built from what its nodes saved.

export function commitMessage(ctx: Ctx): string {
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

export function report(ctx: Ctx, status: "committed" | "blocked", reason: string | null) {
  const verdict = ctx.outputs.verdict === undefined ? undefined : parsed(verdictSchema, ctx.outputs.verdict);
  const reviewed =
    ctx.outputs.reviewed === undefined ? undefined : parsed(reviewedSchema, ctx.outputs.reviewed);
  const findings = reviewed?.reported ?? [];
  const checkRuns: CheckRun[] = verdict?.runs ?? [];
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
    checks: checkRuns,
    findings: { bySeverity, list: findings },
    commit,
    publish: publishOf(ctx),
  };
}

/** How publishing ended, and the branch's PR as gh sees it afterwards; null when it was not asked for. */
function publishOf(ctx: Ctx) {
  // One of the four nodes that record publishing's exit ran, or none when it was not asked for.
  const saved = ["publish-published", "publish-merged", "publish-skipped", "publish-failed"]
    .map((node) => ctx.outputs[node])
    .find((output) => output !== undefined);
  if (saved === undefined) return null;
  const { outcome } = parsed(publishedSchema, saved);
  return { outcome, pr: parsed(pullRequestSchema, ctx.outputs["pull-request"] ?? null) };
}

/** Where the PR goes: the branch the run's branch was made from, as the input or the workspace names it. */
export function publishInput({ input, outputs }: ScopeContext<Input>) {
  const ws = workspaceOf({ outputs });
  const plan = planOf({ outputs });
  const commit = parsed(commitSchema, outputs.commit);
  return {
    branch: ws.branch,
    baseBranch: input.baseBranch ?? ws.base,
    title: plan.title,
    body: [
      changesText(outputs.record === undefined ? undefined : parsed(ledgerSchema, outputs.record)),
      "",
      `Plan: ${plan.path}`,
      `Commit: ${commit.commit ?? "none"}`,
    ].join("\n"),
    merge: input.merge,
    maxRounds: input.maxRounds,
  };
}

function summaryOfPlan(ctx: Ctx): { path: string; digest: string; title: string } | null {
  const saved = ctx.outputs.written ?? ctx.outputs.locate;
  if (saved === undefined) return null;
  const plan = parsed(planFileSchema, saved);
  return plan.status === "found" ? { path: plan.path, digest: plan.digest, title: plan.title } : null;
}

export function stopReason(ctx: Ctx): string {
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

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
