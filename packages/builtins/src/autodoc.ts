import {
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  type NodeContext,
  shell,
  WorkflowError,
  workspace,
} from "piw";
import { z } from "zod";
import {
  ASSESSOR_SYSTEM_PROMPT,
  assessPrompt,
  type ChangeFacts,
  type UnbackedClaim,
  updatePrompt,
  VERIFIER_SYSTEM_PROMPT,
  verifyPrompt,
} from "./autodoc-prompts.js";
import {
  type Assessment,
  assessSchema,
  checkAssessment,
  diffSchema,
  digestsSchema,
  type Judgement,
  judge,
  judgeSchema,
  updateSchema,
  verifySchema,
} from "./autodoc-checks.js";
import {
  DIGESTS,
  DOC_DIFF,
  GATHER,
  gatheredSchema,
  parseDiff,
  parseDigests,
  parseGathered,
} from "./autodoc-scripts.js";
import {
  baseSchema,
  CHECK_LINES,
  parseBase,
  parseCheckLines,
  RESOLVE_BASE,
  refSchema,
  repoPath,
} from "./repo-scripts.js";

const STEP_TIMEOUT_MS = 20 * 60_000;
const EDIT_TOOLS = ["read", "grep", "find", "ls", "edit", "write"] as const;

const inputSchema = z.object({
  /** What changed, in the user's words: the free words of `/workflow autodoc <words>`. */
  task: z.string().trim().min(1).max(4000),
  /** The plan the change followed: a file in the repository, or its text. */
  plan: z.string().max(16_000).optional(),
  /** Documents to consider besides the ones autodoc finds, relative to the repository. */
  documents: z.array(z.string().min(1).max(500)).max(50).optional(),
  /** Where to edit: a new worktree (default), a new branch in the checkout, or the checkout as it is. */
  workspace: z.enum(["worktree", "branch", "none"]).default("worktree"),
  /** The ref the change is compared with; default the upstream, else origin/HEAD, else HEAD^. */
  base: refSchema.optional(),
  /** A folder inside the repository to prepare the workspace from; default the run's folder. */
  from: z.string().min(1).max(1000).optional(),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success) throw new WorkflowError("autodoc: an earlier step's output has an unexpected shape.");
  return result.data;
}

const BASE_PROBLEMS: Record<string, string> = {
  not_a_repository: "autodoc needs a git repository: run it inside one.",
  no_commits: "autodoc needs a repository with at least one commit.",
  unknown_base: "The base given is not a commit in this repository.",
  no_base: "No base to compare with: no upstream, no origin/HEAD and no parent commit. Give one as base.",
};

/** Where the workspace is prepared from: a parent's workspace when one includes autodoc, else the run's folder. */
const preparedFrom = ({ input }: Ctx): string => input.from ?? ".";

const rootOf = (ctx: Ctx): string => parsed(baseSchema, ctx.outputs.base).root;

/** A script run at the repository root with its arguments. */
const atRoot = (ctx: Ctx, script: string, args: readonly string[]): string[] => [
  "sh",
  "-c",
  `cd "$1" || exit 1\nshift\n${script}`,
  "autodoc",
  rootOf(ctx),
  ...args,
];

/** A one-line plan may name a file; GATHER reads it when it is one inside the repository. */
const planPath = (plan: string | undefined): string =>
  plan !== undefined && !plan.includes("\n") && plan.trim().length <= 500 ? plan.trim() : "";

const namedDocuments = (ctx: Ctx): string[] => {
  const root = rootOf(ctx);
  return (ctx.input.documents ?? []).flatMap((doc) => {
    const path = repoPath(doc, root);
    return path === null ? [] : [path];
  });
};

function facts(ctx: Ctx): ChangeFacts {
  const base = parsed(baseSchema, ctx.outputs.base);
  const gathered = parsed(gatheredSchema, ctx.outputs.gather);
  return {
    root: base.root,
    base: `${base.ref} (${base.sha.slice(0, 12)})`,
    task: ctx.input.task,
    plan: gathered.planFile ?? ctx.input.plan ?? null,
    log: gathered.log,
    files: gathered.files,
    diff: gathered.diff,
    diffTruncated: gathered.diffTruncated,
  };
}

/** The assessed documents, each path made relative to the repository root. */
function assessed(ctx: Ctx): Assessment["documents"] {
  const root = rootOf(ctx);
  return parsed(assessSchema, ctx.outputs.assess).documents.flatMap((doc) => {
    const path = repoPath(doc.path, root);
    return path === null ? [] : [{ ...doc, path }];
  });
}

const toUpdate = (ctx: Ctx) => assessed(ctx).filter((doc) => doc.decision === "update");

/** Where the verifier's evidence points, in order, as `<file> <line>` arguments for CHECK_LINES. */
function evidenceLocations(ctx: Ctx): Array<{ file: string; line: number }> {
  const root = rootOf(ctx);
  return parsed(verifySchema, ctx.outputs.verify).claims.flatMap((claim) =>
    claim.evidence.map(({ file, line }) => ({ file: repoPath(file, root) ?? "/", line })),
  );
}

const JUDGE_ROUTES = { ready: "digests", update: "update", blocked: "stop" } as const;

const workspaceSchema = z.object({
  path: z.string(),
  branch: z.string(),
  mode: z.enum(["worktree", "branch"]),
});

/** Where the edits are: the workspace the run prepared, or null when it edits the checkout as it is. */
function workspaceOf(ctx: Ctx): z.infer<typeof workspaceSchema> | null {
  const made = ctx.outputs.worktree ?? ctx.outputs.branch;
  if (made === undefined) return null;
  const { path, branch, mode } = parsed(workspaceSchema, made);
  return { path, branch, mode };
}

function ready(ctx: Ctx) {
  const base = parsed(baseSchema, ctx.outputs.base);
  const digests = parsed(digestsSchema, ctx.outputs.digests);
  const verdict = ctx.outputs.judge === undefined ? undefined : parsed(judgeSchema, ctx.outputs.judge);
  const changed = new Set(verdict?.changed ?? []);
  return {
    status: "ready" as const,
    task: ctx.input.task,
    workspace: workspaceOf(ctx),
    base: { ref: base.ref, sha: base.sha },
    documents: assessed(ctx).map((doc) => ({
      path: doc.path,
      decision: doc.decision,
      reason: doc.reason,
      changed: changed.has(doc.path),
      digest: digests[doc.path] ?? null,
    })),
    rounds: verdict?.round ?? 0,
    claims: verdict?.backed ?? [],
  };
}

function blocked(ctx: Ctx) {
  const verdict = ctx.outputs.judge === undefined ? undefined : parsed(judgeSchema, ctx.outputs.judge);
  const reason =
    verdict === undefined
      ? "No document in the repository describes what this change touched."
      : verdict.outside.length > 0
        ? `The update changed files it was not given: ${verdict.outside.join(", ")}. Review them before running autodoc again.`
        : `After ${verdict.round} rounds the documentation still makes claims the code does not back.`;
  return {
    status: "blocked" as const,
    task: ctx.input.task,
    workspace: workspaceOf(ctx),
    reason,
    unbacked: verdict?.unbacked ?? [],
    outside: verdict?.outside ?? [],
    summary: parsed(assessSchema, ctx.outputs.assess).summary,
  };
}

/**
 * autodoc: brings the documentation in line with a change. Finds the documents that describe what
 * changed, updates the stale ones in the conversation, and has an isolated read-only session back
 * every changed claim with a file and line of code before it calls them ready.
 */
export default defineWorkflow({
  name: "autodoc",
  title: "Update the documentation for a change",
  summary:
    "Find the documents a change made stale, update them in the conversation and verify every changed claim against the code.",
  input: inputSchema,
  textInput: "task",
  startAt: "where",
  exits: ["ready", "blocked"],
  nodes: {
    where: decision({
      title: "Where to edit",
      choices: ["worktree", "branch", "none"],
      decide: ({ input }: Ctx) => input.workspace,
    }),
    worktree: workspace({ mode: "worktree", title: "Prepare a worktree", from: preparedFrom }),
    branch: workspace({ mode: "branch", title: "Prepare a branch", from: preparedFrom }),
    base: shell({
      title: "Find the base",
      exec: ({ input }: Ctx) => ["sh", "-c", RESOLVE_BASE, "autodoc", input.base ?? ""],
      parse: ({ stdout }) => {
        const found = parseBase(stdout);
        if (found.ok) return found.base;
        throw new WorkflowError(
          BASE_PROBLEMS[found.reason] ?? "autodoc could not find the base to compare with.",
        );
      },
      timeoutMs: 60_000,
    }),
    gather: shell({
      title: "What changed and which documents exist",
      exec: (ctx: Ctx) =>
        atRoot(ctx, GATHER, [parsed(baseSchema, ctx.outputs.base).mergeBase, planPath(ctx.input.plan)]),
      parse: ({ stdout }) => parseGathered(stdout),
      timeoutMs: 60_000,
    }),
    assess: agent({
      session: "isolated",
      title: "Which documents are stale",
      systemPrompt: ASSESSOR_SYSTEM_PROMPT,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: (ctx: Ctx) =>
        assessPrompt(facts(ctx), parsed(gatheredSchema, ctx.outputs.gather).documents, namedDocuments(ctx)),
      output: assessSchema,
      validate: (out, ctx: Ctx) =>
        checkAssessment(
          out,
          parsed(gatheredSchema, ctx.outputs.gather).documents,
          namedDocuments(ctx),
          rootOf(ctx),
        ),
    }),
    decide: decision({
      title: "Current or update",
      choices: ["update", "current", "nothing"],
      decide: (ctx: Ctx) =>
        assessed(ctx).length === 0 ? "nothing" : toUpdate(ctx).length > 0 ? "update" : "current",
    }),
    before: shell({
      title: "Snapshot before the update",
      exec: (ctx: Ctx) => atRoot(ctx, DIGESTS, ["all", ...toUpdate(ctx).map((doc) => doc.path)]),
      parse: ({ stdout }) => parseDigests(stdout),
      timeoutMs: 60_000,
    }),
    update: agent({
      title: "Update the documents",
      tools: EDIT_TOOLS,
      timeoutMs: 30 * 60_000,
      statusDetail: (ctx: Ctx) =>
        toUpdate(ctx)
          .map((doc) => doc.path)
          .join(", ")
          .slice(0, 200),
      prompt: (ctx: Ctx) =>
        updatePrompt({
          root: rootOf(ctx),
          task: ctx.input.task,
          plan: facts(ctx).plan,
          documents: toUpdate(ctx),
          findings:
            ctx.outputs.judge === undefined
              ? []
              : (parsed(judgeSchema, ctx.outputs.judge).unbacked satisfies UnbackedClaim[]),
        }),
      output: updateSchema,
      validate: (out, ctx: Ctx) => {
        const allowed = toUpdate(ctx).map((doc) => doc.path);
        const root = rootOf(ctx);
        const other = out.files.filter((file) => !allowed.includes(repoPath(file.path, root) ?? ""));
        return other.length === 0
          ? undefined
          : `change only the files you were given; not: ${other.map((f) => f.path).join(", ")}`;
      },
    }),
    after: shell({
      title: "Snapshot after the update",
      exec: (ctx: Ctx) => {
        const before = parsed(digestsSchema, ctx.outputs.before);
        return atRoot(ctx, DIGESTS, ["all", ...Object.keys(before)]);
      },
      parse: ({ stdout }) => parseDigests(stdout),
      timeoutMs: 60_000,
    }),
    "doc-diff": shell({
      title: "The documentation diff",
      exec: (ctx: Ctx) =>
        atRoot(
          ctx,
          DOC_DIFF,
          toUpdate(ctx).map((doc) => doc.path),
        ),
      parse: ({ stdout }) => parseDiff(stdout),
      timeoutMs: 60_000,
    }),
    verify: agent({
      session: "isolated",
      title: "Check every changed claim",
      systemPrompt: VERIFIER_SYSTEM_PROMPT,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: (ctx: Ctx) => {
        const diff = parsed(diffSchema, ctx.outputs["doc-diff"]);
        return verifyPrompt({
          root: rootOf(ctx),
          task: ctx.input.task,
          diff: diff.text,
          diffTruncated: diff.truncated,
        });
      },
      output: verifySchema,
      validate: (out) => {
        const bare = out.claims.filter((claim) => claim.backed && claim.evidence.length === 0);
        if (bare.length > 0) return "a backed claim needs at least one file, line and quote as evidence";
        const silent = out.claims.filter((claim) => !claim.backed && !claim.problem?.trim());
        return silent.length > 0 ? "say for each unbacked claim what the code does instead" : undefined;
      },
    }),
    "check-evidence": shell({
      title: "Check every quoted line exists",
      exec: (ctx: Ctx) =>
        // CHECK_LINES goes to the root itself.
        [
          "sh",
          "-c",
          CHECK_LINES,
          "autodoc",
          rootOf(ctx),
          ...evidenceLocations(ctx).flatMap(({ file, line }) => [file, String(line)]),
        ],
      parse: ({ stdout }) => parseCheckLines(stdout),
      timeoutMs: 60_000,
    }),
    judge: compute({
      title: "Backed, again, or blocked",
      run: (ctx: Ctx): Judgement =>
        judge({
          round: ctx.node.visit,
          allowed: toUpdate(ctx).map((doc) => doc.path),
          before: parsed(digestsSchema, ctx.outputs.before),
          after: parsed(digestsSchema, ctx.outputs.after),
          verification: parsed(verifySchema, ctx.outputs.verify),
          exists: parsed(z.array(z.boolean()), ctx.outputs["check-evidence"]),
        }),
    }),
    digests: shell({
      title: "Digest every document",
      exec: (ctx: Ctx) => atRoot(ctx, DIGESTS, ["only", ...assessed(ctx).map((doc) => doc.path)]),
      parse: ({ stdout }) => parseDigests(stdout),
      timeoutMs: 60_000,
    }),
    report: compute({ title: "Ready", run: ready }),
    stop: compute({ title: "Blocked", run: blocked }),
  },
  edges: {
    where: decisionEdge({ worktree: "worktree", branch: "branch", none: "base" }),
    worktree: { to: "base" },
    branch: { to: "base" },
    base: { to: "gather" },
    gather: { to: "assess" },
    assess: { to: "decide" },
    decide: decisionEdge({ update: "before", current: "digests", nothing: "stop" }),
    before: { to: "update" },
    update: { to: "after" },
    after: { to: "doc-diff" },
    "doc-diff": { to: "verify" },
    verify: { to: "check-evidence" },
    "check-evidence": { to: "judge" },
    judge: {
      to: ["digests", "update", "stop"],
      route: (out) => JUDGE_ROUTES[out.next],
    },
    digests: { to: "report" },
    report: { to: "ready" },
    stop: { to: "blocked" },
  },
  presentationPrompt:
    "Say whether the documentation is ready or blocked. If ready, list each document with current or " +
    "updated and one line on what changed, and where the workspace is. If blocked, give the reason and " +
    "the claims the code does not back. Quote the output; add nothing of your own.",
});
