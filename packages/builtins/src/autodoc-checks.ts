import { z } from "zod";
import { changedFiles } from "./autodoc-scripts.js";
import { repoPath } from "./repo-scripts.js";

// autodoc's step outputs and the pure checks over them: what the model may answer, and what a round means.

/** Update rounds: the first, and one more with the verifier's findings; then the run is blocked. */
export const MAX_UPDATE_ROUNDS = 2;

const decisionSchema = z.enum(["current", "update"]);
export const assessSchema = z.object({
  documents: z
    .array(
      z.object({
        path: z.string().min(1).max(500),
        decision: decisionSchema,
        reason: z.string().min(1).max(600),
        edits: z.array(z.string().min(1).max(600)).max(12),
      }),
    )
    .max(40),
  summary: z.string().min(1).max(1200),
});
export type Assessment = z.infer<typeof assessSchema>;

export const updateSchema = z.object({
  files: z.array(z.object({ path: z.string().min(1).max(500), change: z.string().min(1).max(600) })).max(40),
});

const evidenceSchema = z.object({
  file: z.string().min(1).max(500),
  line: z.number().int().min(1),
  quote: z.string().min(1).max(400),
});
export const verifySchema = z.object({
  claims: z
    .array(
      z.object({
        document: z.string().min(1).max(500),
        claim: z.string().min(1).max(600),
        backed: z.boolean(),
        evidence: z.array(evidenceSchema).max(5),
        problem: z.string().max(400).optional(),
      }),
    )
    .max(60),
});
export type Verification = z.infer<typeof verifySchema>;

export const digestsSchema = z.record(z.string(), z.string().nullable());
export const diffSchema = z.object({ text: z.string(), truncated: z.boolean() });

export const judgeSchema = z.object({
  next: z.enum(["ready", "update", "blocked"]),
  round: z.number().int(),
  changed: z.array(z.string()),
  outside: z.array(z.string()),
  unbacked: z.array(z.object({ document: z.string(), claim: z.string(), problem: z.string() })),
  backed: z.array(z.object({ document: z.string(), claim: z.string(), evidence: z.array(evidenceSchema) })),
});
export type Judgement = z.infer<typeof judgeSchema>;

/** The assessment may name only documents it was shown or the user named, each once, with reasons. */
export function checkAssessment(
  out: Assessment,
  known: readonly string[],
  named: readonly string[],
  root: string,
): string | undefined {
  const paths = out.documents.map((doc) => repoPath(doc.path, root));
  const outside = out.documents.filter((_, i) => paths[i] === null).map((doc) => doc.path);
  if (outside.length > 0) return `name documents inside the repository; not: ${outside.join(", ")}`;
  const unknown = paths.filter((path) => path !== null && !known.includes(path) && !named.includes(path));
  if (unknown.length > 0) return `answer only for the listed documents; not listed: ${unknown.join(", ")}`;
  const twice = paths.filter((path, i) => paths.indexOf(path) !== i);
  if (twice.length > 0) return `answer once per document; twice: ${[...new Set(twice)].join(", ")}`;
  const missing = named.filter((path) => !paths.includes(path));
  if (missing.length > 0) return `answer for every document the user named; missing: ${missing.join(", ")}`;
  const vague = out.documents.filter((doc) => doc.decision === "update" && doc.edits.length === 0);
  if (vague.length > 0)
    return `list the edits for each update; none for: ${vague.map((d) => d.path).join(", ")}`;
  return undefined;
}

/**
 * The round's outcome: which files the update changed, whether it kept to its files, and which claims
 * the code backs (a backed claim whose every quoted line is missing is unbacked).
 */
export function judge(args: {
  round: number;
  allowed: readonly string[];
  before: Record<string, string | null>;
  after: Record<string, string | null>;
  verification: Verification;
  exists: readonly boolean[];
}): Judgement {
  const touched = changedFiles(args.before, args.after);
  const changed = touched.filter((path) => args.allowed.includes(path));
  const outside = touched.filter((path) => !args.allowed.includes(path));
  let at = 0;
  const unbacked: Judgement["unbacked"] = [];
  const backed: Judgement["backed"] = [];
  for (const claim of args.verification.claims) {
    const evidence = claim.evidence.filter(() => args.exists[at++] === true);
    if (claim.backed && evidence.length > 0)
      backed.push({ document: claim.document, claim: claim.claim, evidence });
    else {
      const problem = claim.backed
        ? "the lines quoted as evidence do not exist"
        : (claim.problem ?? "no code backs it");
      unbacked.push({ document: claim.document, claim: claim.claim, problem });
    }
  }
  const untouched = args.allowed.filter((path) => !changed.includes(path));
  if (changed.length === 0) {
    unbacked.push(
      ...untouched.map((document) => ({ document, claim: "(no edit)", problem: "the file was not changed" })),
    );
  }
  const again = args.round < MAX_UPDATE_ROUNDS;
  const next =
    outside.length > 0 ? "blocked" : unbacked.length === 0 ? "ready" : again ? "update" : "blocked";
  return { next, round: args.round, changed, outside, unbacked, backed };
}
