import {
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  map,
  type NodeContext,
  shell,
  WorkflowError,
} from "piw";
import { z } from "zod";
import {
  type ChangeEvidence,
  type ClaimForCheck,
  QUESTIONS,
  type QuestionKey,
  REVIEWER_SYSTEM_PROMPT,
  reviewerPrompt,
  VERIFIER_SYSTEM_PROMPT,
  verifierPrompt,
} from "./sanity-check-prompts.js";
import {
  type Base,
  baseSchema,
  CHECK_LINES,
  findBaseNode,
  parseCheckLines,
  refSchema,
  repoPath,
} from "./repo-scripts.js";

const VERDICTS = ["keep", "simplify", "refactor", "drop", "needs_evidence"] as const;
const verdictSchema = z.enum(VERDICTS);
type Verdict = z.infer<typeof verdictSchema>;

/** The diff the reviewers get inline; past this they read the files themselves. */
const DIFF_MAX_CHARS = 32_000;
/** Lines of `git status` and files of the change listed to the reviewers. */
const LIST_MAX = 300;
const REVIEW_TIMEOUT_MS = 15 * 60_000;

const inputSchema = z.object({
  /** What the change is for, in the author's words: the free words of `piw run sanity-check <words>`. */
  focus: z.string().max(4000).optional(),
  base: refSchema.optional(),
  mode: z.enum(["serial", "parallel"]).default("parallel"),
  failOn: z.array(verdictSchema).max(VERDICTS.length).default([]),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

const CHANGES = `cd "$1" || exit 1
echo "# status"
git status --porcelain=v1 --untracked-files=all | head -n ${LIST_MAX}
echo "# files"
git diff --name-only "$2" | head -n ${LIST_MAX}`;

// One byte past the limit tells the parser the diff was cut.
const DIFF = `cd "$1" || exit 1
git diff --no-color --no-ext-diff "$2" | head -c ${DIFF_MAX_CHARS * 4 + 1}`;

const changesSchema = z.object({ status: z.array(z.string()), files: z.array(z.string()) });
const diffSchema = z.object({ text: z.string(), truncated: z.boolean() });

const findingSchema = z.object({
  claim: z.string().min(1).max(600),
  file: z.string().min(1).max(500),
  line: z.number().int().min(1),
  severity: z.enum(["must", "should", "note"]),
});
const reviewSchema = z.object({
  verdict: verdictSchema,
  summary: z.string().min(1).max(1200),
  findings: z.array(findingSchema).max(20),
  questions: z.array(z.string().min(1).max(400)).max(5),
});
type Review = z.infer<typeof reviewSchema>;

const verifySchema = z.object({
  kept: z
    .array(
      z.object({
        id: z.string(),
        file: z.string().min(1).max(500),
        line: z.number().int().min(1),
        evidence: z.string().min(1).max(800),
      }),
    )
    .max(80),
  dropped: z.array(z.object({ id: z.string(), reason: z.string().min(1).max(300) })).max(80),
  verdict: verdictSchema,
  summary: z.string().min(1).max(1200),
  requiredChanges: z
    .array(
      z.object({
        change: z.string().min(1).max(600),
        file: z.string().min(1).max(500),
        line: z.number().int().min(1),
        because: z.array(z.string()).min(1),
      }),
    )
    .max(20),
  questions: z.array(z.string().min(1).max(400)).max(10),
});
type Verification = z.infer<typeof verifySchema>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success)
    throw new WorkflowError("sanity-check: an earlier step's output has an unexpected shape.");
  return result.data;
}

function evidenceOf({ input, outputs }: Ctx): ChangeEvidence {
  const base = parsed(baseSchema, outputs.base);
  const changes = parsed(changesSchema, outputs.changes);
  const diff = parsed(diffSchema, outputs.diff);
  return {
    root: base.root,
    base: `${base.ref} (${base.sha.slice(0, 12)})`,
    focus: input.focus?.trim() ? input.focus.trim() : null,
    status: changes.status,
    files: changes.files,
    diff: diff.text,
    diffTruncated: diff.truncated,
  };
}

const reviewItem = z.object({
  question: z.enum(Object.keys(QUESTIONS) as [QuestionKey, ...QuestionKey[]]),
  evidence: z.custom<ChangeEvidence>(),
});
type ReviewItem = z.infer<typeof reviewItem>;

/** One reviewer: a fresh, read-only session per question, so no reviewer sees another's answer. */
const reviewer = agent({
  session: "isolated",
  systemPrompt: REVIEWER_SYSTEM_PROMPT,
  timeoutMs: REVIEW_TIMEOUT_MS,
  title: "Reviewer",
  statusDetail: ({ input }: NodeContext<ReviewItem>) => QUESTIONS[input.question].title,
  prompt: ({ input }: NodeContext<ReviewItem>) => reviewerPrompt(input.question, input.evidence),
  output: reviewSchema,
});

const overQuestions = (ctx: Ctx): ReviewItem[] => {
  const evidence = evidenceOf(ctx);
  return (Object.keys(QUESTIONS) as QuestionKey[]).map((question) => ({ question, evidence }));
};

/** The reviews of whichever map ran, with their question, in question order. */
function reviewsOf(outputs: Record<string, unknown>): Array<{ question: QuestionKey; review: Review }> {
  const list = outputs["parallel-review"] ?? outputs["serial-review"];
  const reviews = parsed(z.array(reviewSchema), list);
  const questions = Object.keys(QUESTIONS) as QuestionKey[];
  return reviews.flatMap((review, i) => {
    const question = questions[i];
    return question === undefined ? [] : [{ question, review }];
  });
}

function claimsOf(outputs: Record<string, unknown>): ClaimForCheck[] {
  return reviewsOf(outputs).flatMap(({ question, review }) =>
    review.findings.map((finding, i) => ({ id: `${question}-${i + 1}`, question, ...finding })),
  );
}

/** The verifier's answer must account for every claim and rest its verdict on kept ones. */
function checkVerification(out: Verification, ctx: Ctx): string | undefined {
  const ids = claimsOf(ctx.outputs).map((claim) => claim.id);
  const answered = [...out.kept.map((k) => k.id), ...out.dropped.map((d) => d.id)];
  const missing = ids.filter((id) => !answered.includes(id));
  if (missing.length > 0) return `keep or drop every claim; not answered: ${missing.join(", ")}`;
  const twice = answered.filter((id, i) => answered.indexOf(id) !== i || !ids.includes(id));
  if (twice.length > 0)
    return `answer each listed claim exactly once; check: ${[...new Set(twice)].join(", ")}`;
  const kept = new Set(out.kept.map((k) => k.id));
  const unbacked = out.requiredChanges.filter((change) => change.because.some((id) => !kept.has(id)));
  if (unbacked.length > 0) return "every required change must rest only on claims you kept";
  if (out.verdict === "keep" && out.requiredChanges.length > 0)
    return "a keep verdict has no required changes";
  if (out.verdict !== "keep" && out.verdict !== "needs_evidence" && kept.size === 0) {
    return `a ${out.verdict} verdict must rest on at least one kept claim; otherwise answer needs_evidence`;
  }
  return undefined;
}

/** Where the kept claims and required changes point, as `<file> <line>` arguments for CHECK_LINES. */
function locationsOf(ctx: Ctx): Array<{ file: string; line: number }> {
  const base = parsed(baseSchema, ctx.outputs.base);
  const verified = parsed(verifySchema, ctx.outputs.verify);
  return [...verified.kept, ...verified.requiredChanges].map(({ file, line }) => ({
    file: repoPath(file, base.root) ?? "/",
    line,
  }));
}

interface SanityCheckReport {
  verdict: Verdict;
  summary: string;
  base: { ref: string; sha: string; how: Base["how"] };
  mode: Input["mode"];
  requiredChanges: Array<{ change: string; file: string; line: number }>;
  questions: string[];
  findings: Array<{
    question: QuestionKey;
    severity: string;
    claim: string;
    file: string;
    line: number;
    evidence: string;
  }>;
  /** Claims dropped: by the verifier, or because their file and line do not exist. */
  dropped: number;
  /** True when the verdict is one of `failOn`: the run then fails after saving this report. */
  failing: boolean;
}

function report(ctx: Ctx): SanityCheckReport {
  const base = parsed(baseSchema, ctx.outputs.base);
  const verified = parsed(verifySchema, ctx.outputs.verify);
  const exists = parsed(z.array(z.boolean()), ctx.outputs["check-lines"]);
  const located = locationsOf(ctx).map((location, i) => ({ ...location, ok: exists[i] === true }));
  const claims = new Map(claimsOf(ctx.outputs).map((claim) => [claim.id, claim]));
  const findings = verified.kept.flatMap((kept, i) => {
    const claim = claims.get(kept.id);
    const at = located[i];
    if (claim === undefined || at === undefined || !at.ok) return [];
    const { question, severity } = claim;
    return [
      {
        question: question as QuestionKey,
        severity,
        claim: claim.claim,
        file: at.file,
        line: at.line,
        evidence: kept.evidence,
      },
    ];
  });
  const keptIds = new Set(verified.kept.filter((_, i) => located[i]?.ok === true).map((kept) => kept.id));
  const requiredChanges = verified.requiredChanges.flatMap((change, i) => {
    const at = located[verified.kept.length + i];
    if (at === undefined || !at.ok || !change.because.every((id) => keptIds.has(id))) return [];
    return [{ change: change.change, file: at.file, line: at.line }];
  });
  // A verdict against the change that lost every claim it rested on cannot stand.
  const unbacked =
    verified.verdict !== "keep" && verified.verdict !== "needs_evidence" && findings.length === 0;
  const verdict: Verdict = unbacked ? "needs_evidence" : verified.verdict;
  return {
    verdict,
    summary: verified.summary,
    base: { ref: base.ref, sha: base.sha, how: base.how },
    mode: ctx.input.mode,
    requiredChanges,
    questions: verified.questions,
    findings,
    dropped: claims.size - findings.length,
    failing: ctx.input.failOn.includes(verdict),
  };
}

function nothingToReview(ctx: Ctx): SanityCheckReport {
  const base = parsed(baseSchema, ctx.outputs.base);
  return {
    verdict: "needs_evidence",
    summary: `Nothing differs from ${base.ref} (${base.sha.slice(0, 12)}): there is no change to review.`,
    base: { ref: base.ref, sha: base.sha, how: base.how },
    mode: ctx.input.mode,
    requiredChanges: [],
    questions: ["Which base should the change be compared with? Give it as base."],
    findings: [],
    dropped: 0,
    failing: ctx.input.failOn.includes("needs_evidence"),
  };
}

/** Ends the run as failed, for CI: the report was saved as the previous step's output. */
function failOnVerdict({ outputs }: Ctx): never {
  const saved = parsed(
    z.object({ verdict: verdictSchema, requiredChanges: z.array(z.object({ change: z.string() })) }),
    outputs.report ?? outputs.nothing,
  );
  const changes = saved.requiredChanges.length;
  throw new WorkflowError(
    `sanity-check verdict ${saved.verdict} is listed in failOn (${changes} required change${changes === 1 ? "" : "s"}); see piw status for the report.`,
  );
}

/**
 * sanity-check: a review of the change in the working tree before it is merged, by four isolated
 * read-only reviewers and a verifier that keeps only the claims it can see in the code.
 */
export default defineWorkflow({
  name: "sanity-check",
  title: "Sanity check of a change",
  summary:
    "Review the current change against its base with four read-only reviewers and a verifier; ends with a verdict.",
  input: inputSchema,
  textInput: "focus",
  startAt: "base",
  nodes: {
    base: findBaseNode<Input>("sanity-check"),
    changes: shell({
      title: "Status and changed files",
      exec: ({ outputs }: Ctx) => {
        const base = parsed(baseSchema, outputs.base);
        return ["sh", "-c", CHANGES, "sanity-check", base.root, base.mergeBase];
      },
      parse: ({ stdout }) => {
        const [, status = "", files = ""] = stdout.split(/^# (?:status|files)$/m);
        const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");
        return { status: lines(status), files: lines(files) };
      },
      timeoutMs: 60_000,
    }),
    diff: shell({
      title: "Diff against the base",
      exec: ({ outputs }: Ctx) => {
        const base = parsed(baseSchema, outputs.base);
        return ["sh", "-c", DIFF, "sanity-check", base.root, base.mergeBase];
      },
      parse: ({ stdout }) =>
        stdout.length > DIFF_MAX_CHARS
          ? { text: stdout.slice(0, DIFF_MAX_CHARS), truncated: true }
          : { text: stdout, truncated: false },
      timeoutMs: 60_000,
    }),
    anything: decision({
      title: "Anything to review?",
      choices: ["review", "nothing"],
      decide: ({ outputs }: Ctx) => {
        const changes = parsed(changesSchema, outputs.changes);
        return changes.status.length > 0 || changes.files.length > 0 ? "review" : "nothing";
      },
    }),
    mode: decision({
      title: "Parallel or serial",
      choices: ["parallel", "serial"],
      decide: ({ input }: Ctx) => input.mode,
    }),
    "parallel-review": map({
      title: "Four reviewers at once",
      over: overQuestions,
      branch: reviewer,
      concurrency: 4,
      maxItems: 4,
    }),
    "serial-review": map({
      title: "Four reviewers in turn",
      over: overQuestions,
      branch: reviewer,
      concurrency: 1,
      maxItems: 4,
    }),
    verify: agent({
      session: "isolated",
      title: "Verify the claims",
      systemPrompt: VERIFIER_SYSTEM_PROMPT,
      timeoutMs: REVIEW_TIMEOUT_MS,
      prompt: (ctx: Ctx) => verifierPrompt(claimsOf(ctx.outputs), evidenceOf(ctx)),
      output: verifySchema,
      validate: checkVerification,
    }),
    "check-lines": shell({
      title: "Check every file and line",
      exec: (ctx: Ctx) => {
        const base = parsed(baseSchema, ctx.outputs.base);
        const pairs = locationsOf(ctx).flatMap(({ file, line }) => [file, String(line)]);
        return ["sh", "-c", CHECK_LINES, "sanity-check", base.root, ...pairs];
      },
      parse: ({ stdout }) => parseCheckLines(stdout),
      timeoutMs: 60_000,
    }),
    report: compute({ title: "Verdict", run: report }),
    nothing: compute({ title: "Nothing to review", run: nothingToReview }),
    "fail-on": compute({ title: "Fail on the verdict", run: failOnVerdict }),
  },
  edges: {
    base: { to: "changes" },
    changes: { to: "diff" },
    diff: { to: "anything" },
    anything: decisionEdge({ review: "mode", nothing: "nothing" }),
    mode: decisionEdge({ parallel: "parallel-review", serial: "serial-review" }),
    "parallel-review": { to: "verify" },
    "serial-review": { to: "verify" },
    verify: { to: "check-lines" },
    "check-lines": { to: "report" },
    report: { to: ["done", "fail-on"], route: (out) => (out.failing ? "fail-on" : "done") },
    nothing: { to: ["done", "fail-on"], route: (out) => (out.failing ? "fail-on" : "done") },
    "fail-on": { to: "done" },
  },
  presentationPrompt:
    "Give the verdict first, then each required change with its file and line, then the questions. " +
    "Quote the report; add no findings of your own.",
});
