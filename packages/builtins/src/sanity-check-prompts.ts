// The words sanity-check's reviewers and verifier read. They are product text: a model sees them with
// nothing else about piw, so they say what to look at and what a good answer holds, and no more.

/** The four questions, each asked of one reviewer with the same evidence. */
export const QUESTIONS = {
  necessary: {
    title: "Is it necessary?",
    ask:
      "Is every part of this change needed for what it sets out to do? Point to code that nothing " +
      "uses, options nobody asked for, speculative generality, and changes unrelated to the purpose.",
  },
  duplication: {
    title: "Is it written twice?",
    ask:
      "Is anything in this change written twice? Look for logic, types, constants, prompts or tests " +
      "that repeat code already in the repository or elsewhere in the change. Name both places.",
  },
  contracts: {
    title: "Are the contracts right?",
    ask:
      "Are the contracts right? Check the types, signatures, errors and edge cases at every boundary " +
      "the change touches (public functions, files, processes, network, user input): what a caller " +
      "may pass, what it gets back, and what happens on failure.",
  },
  scope: {
    title: "Are scope and tests right?",
    ask:
      "Are the scope and the tests right? Does the change do only what its purpose needs, and do its " +
      "tests exercise the new behaviour, failures included, in a way that would fail without it? " +
      "Name missing, weak or misleading tests.",
  },
} as const;

export type QuestionKey = keyof typeof QUESTIONS;

export const REVIEWER_SYSTEM_PROMPT =
  "You review code changes. Read before you judge, cite only what you have read, and never modify a file.";

export const VERIFIER_SYSTEM_PROMPT =
  "You check other reviewers' claims against the code. Trust nothing you have not read yourself.";

/** What every reviewer is told about the change, whatever its question. */
export interface ChangeEvidence {
  root: string;
  base: string;
  focus: string | null;
  status: string[];
  files: string[];
  diff: string;
  diffTruncated: boolean;
}

function describeChange(evidence: ChangeEvidence): string {
  const purpose =
    evidence.focus === null
      ? "The author gave no purpose; infer it from the change and say so when it is unclear."
      : `The author's purpose, in their words:\n${evidence.focus}`;
  const truncated = evidence.diffTruncated
    ? "\nThe diff was cut to fit; read the files themselves for the rest."
    : "";
  return [
    `Repository: ${evidence.root} (paths below are relative to it).`,
    `The change: the working tree compared with ${evidence.base}.`,
    purpose,
    `Changed files:\n${evidence.files.join("\n") || "(none tracked)"}`,
    `git status:\n${evidence.status.join("\n") || "(clean)"}`,
    `Diff:\n${evidence.diff || "(empty)"}${truncated}`,
  ].join("\n\n");
}

export function reviewerPrompt(question: QuestionKey, evidence: ChangeEvidence): string {
  return [
    QUESTIONS[question].ask,
    "Read the changed files and whatever they call or are called by before you answer. Report " +
      "each problem as a finding that names the file (relative to the repository) and the line in " +
      "the current working tree where it can be seen. A finding you cannot place on a line is a " +
      "question instead. Report nothing you only suspect.",
    "Give your own verdict on the change from this question alone: keep (fine as it is), simplify " +
      "(right idea, less code), refactor (right idea, wrong structure), drop (should not be merged) " +
      "or needs_evidence (you cannot tell from what is here).",
    describeChange(evidence),
  ].join("\n\n");
}

/** One claim as the verifier sees it: who made it and where it points. */
export interface ClaimForCheck {
  id: string;
  question: string;
  severity: string;
  claim: string;
  file: string;
  line: number;
}

export function verifierPrompt(claims: readonly ClaimForCheck[], evidence: ChangeEvidence): string {
  const listed = claims
    .map((c) => `${c.id} [${c.question}, ${c.severity}] ${c.file}:${c.line}: ${c.claim}`)
    .join("\n");
  return [
    "Other reviewers made the claims below about a change. For each claim, open the file at the " +
      "line it names and decide whether the code there shows what the claim says. Keep a claim only " +
      "when you can quote the lines that back it (put the quote in evidence, with the file and line " +
      "where it starts); drop it otherwise and say why in a few words. Every claim is kept or dropped, " +
      "exactly once.",
    "Then judge the change as a whole: keep, simplify, refactor, drop or needs_evidence. Any verdict " +
      "but keep and needs_evidence must rest on kept claims. List the required changes, each with the " +
      "file and line it applies to and the IDs of the kept claims it rests on; keep needs no required " +
      "changes. Add the questions the author should answer before merging.",
    `Claims:\n${listed || "(none: the reviewers found nothing to report)"}`,
    describeChange(evidence),
  ].join("\n\n");
}
