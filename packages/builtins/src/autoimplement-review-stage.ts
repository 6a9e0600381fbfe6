import { compute, includeWorkflow, parallel, type ScopeContext, shell } from "piw";
import { z } from "zod";
import {
  type Ctx,
  changesText,
  diffSchema,
  type Input,
  parsed,
  planOf,
  reviewedSchema,
  triageOf,
  workspaceOf,
} from "./autoimplement-context.js";
import { ledgerSchema } from "./autoimplement-ledger.js";
import { findingOutcomes } from "./autoimplement-report.js";
import {
  type Lens,
  LENSES,
  reviewer,
  reviewSchema,
  type Triage,
  triage,
  triageSchema,
} from "./autoimplement-review.js";

// autoimplement's review stage: the change's diff, the isolated reviewers that read it, and the triage
// of their findings into the next round.

const DIFF_MAX_CHARS = 32_000;

const LENS_NAMES = Object.keys(LENSES) as Lens[];

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

/** The stage's nodes, in the order of the workflow's; their edges stay with the workflow. */
export const reviewStage = {
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
};
