import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

// The review half of autoimplement: isolated read-only reviewers, their typed findings, and where
// the findings send the run.

const SEVERITIES = ["P0", "P1", "P2", "P3"] as const;
export type Severity = (typeof SEVERITIES)[number];

const SEVERITY_MEANING: Record<Severity, string> = {
  P0: "P0: the change breaks something that worked, loses data or opens a hole; it must not ship",
  P1: "P1: the change does not do what the plan asks, or a test or check is missing for it; fix before it ships",
  P2: "P2: a real flaw worth fixing now (an edge case, unclear naming, a stale document), not a blocker",
  P3: "P3: a nit or an idea for later; noted only",
};

const findingSchema = z.object({
  severity: z.enum(SEVERITIES),
  title: z.string().min(1).max(200),
  detail: z.string().min(1).max(1500).describe("What is wrong and what to do about it"),
  file: z.string().min(1).max(500).describe("The file, relative to the workspace"),
  line: z.number().int().min(1).describe("A line of that file the finding is about"),
  quote: z.string().min(1).max(400).describe("The text of that line, or the part of it that matters"),
});
export type Finding = z.infer<typeof findingSchema>;

export const reviewSchema = z.object({
  summary: z.string().min(1).max(1000),
  findings: z.array(findingSchema).max(30),
});
export type Review = z.infer<typeof reviewSchema>;

export const LENSES = {
  correctness: "Correctness: does the change do what the plan asks, without breaking what worked?",
  tests: "Tests: do tests prove the change (and would they fail without it)? Do the checks really pass?",
  "docs-scope":
    "Documentation and scope: are the documents current with the change, and does it change nothing the plan did not ask for?",
} as const;
export type Lens = keyof typeof LENSES;

const lensSchema = z.enum(Object.keys(LENSES) as [Lens, ...Lens[]]);

const reviewerInputSchema = z.object({
  lens: lensSchema,
  root: z.string(),
  plan: z.string(),
  changes: z.string(),
  diff: z.string(),
  diffTruncated: z.boolean(),
});
type ReviewerInput = z.infer<typeof reviewerInputSchema>;

const REVIEWER_SYSTEM_PROMPT =
  "You review a change another engineer made, through one lens only. You may read the repository but " +
  "not change it. Report only what you can point at: every finding names a file, a line and the text " +
  "on it. Give an honest severity; an empty list is a fine answer for a sound change.";

function reviewerPrompt(input: ReviewerInput): string {
  return [
    `Review the change in ${input.root}.`,
    "",
    `Your lens — ${LENSES[input.lens]}`,
    "",
    "Severities:",
    ...SEVERITIES.map((severity) => `- ${SEVERITY_MEANING[severity]}`),
    "",
    "The plan the change follows:",
    input.plan,
    "",
    "What the implementer says it changed:",
    input.changes,
    "",
    input.diffTruncated
      ? "The diff from the base, cut short (read the files for the rest):"
      : "The diff from the base:",
    "```diff",
    input.diff,
    "```",
  ].join("\n");
}

/** A finding points inside the workspace: the fix step opens the file it names. */
function checkReview(review: Review): string | undefined {
  const outside = review.findings.filter((f) => f.file.startsWith("/") || f.file.split("/").includes(".."));
  return outside.length === 0
    ? undefined
    : `name files relative to the workspace, inside it: ${outside.map((f) => f.file).join(", ")}`;
}

/** One reviewer, mounted once per lens: an isolated read-only session, so no reviewer sees another. */
export const reviewer = defineWorkflow({
  name: "autoimplement-reviewer",
  title: "A reviewer",
  input: reviewerInputSchema,
  startAt: "review",
  nodes: {
    review: agent({
      session: "isolated",
      title: "Review",
      systemPrompt: REVIEWER_SYSTEM_PROMPT,
      timeoutMs: 20 * 60_000,
      statusDetail: ({ input }: NodeContext<ReviewerInput>) => `review: ${input.lens}`,
      prompt: ({ input }: NodeContext<ReviewerInput>) => reviewerPrompt(input),
      output: reviewSchema,
      validate: checkReview,
    }),
  },
  edges: { review: { to: "done" } },
});

/** A finding with the lens and review round it came from. */
export interface RoundFinding extends Finding {
  lens: Lens;
  round: number;
}

/**
 * Where a review round sends the run. `fix`: P0/P1 findings go back to the fix step, and the change
 * is reviewed again. `polish`: only P2 findings; they are fixed once and the change is committed
 * after its checks pass, without another review. `commit`: nothing above P3. `stop`: P0/P1 remain
 * after `maxRounds` review rounds.
 */
export type Triage = {
  round: number;
  next: "fix" | "polish" | "commit" | "stop";
  /** Findings the next step must act on (P0–P2, or none). */
  toFix: RoundFinding[];
  /** Every finding of this round. */
  findings: RoundFinding[];
};

export function triage(reviews: Partial<Record<Lens, Review>>, round: number, maxRounds: number): Triage {
  const findings = (Object.keys(LENSES) as Lens[]).flatMap((lens) =>
    (reviews[lens]?.findings ?? []).map((finding) => ({ ...finding, lens, round })),
  );
  const blocking = findings.filter((f) => f.severity === "P0" || f.severity === "P1");
  if (blocking.length > 0) {
    return { round, next: round > maxRounds ? "stop" : "fix", toFix: blocking, findings };
  }
  const worth = findings.filter((f) => f.severity === "P2");
  // P2s are fixed once: the polish pass is not reviewed again, so no later round sees P2s to fix.
  if (worth.length > 0) return { round, next: "polish", toFix: worth, findings };
  return { round, next: "commit", toFix: [], findings };
}

export const triageSchema = z.custom<Triage>((value) => typeof value === "object" && value !== null);
