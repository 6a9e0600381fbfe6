// The words autodoc's steps read. They are product text: a model sees them with nothing else about
// piw, so they say what to look at and what a good answer holds, and no more.

export const ASSESSOR_SYSTEM_PROMPT =
  "You decide which documentation a change makes stale. Read before you judge and never modify a file.";

export const VERIFIER_SYSTEM_PROMPT =
  "You check documentation against code. Trust nothing you have not read in the code yourself.";

/** What the assessor is told about the change. */
export interface ChangeFacts {
  root: string;
  base: string;
  task: string;
  plan: string | null;
  log: string[];
  files: string[];
  diff: string;
  diffTruncated: boolean;
}

function describeChange(facts: ChangeFacts): string {
  const cut = facts.diffTruncated ? "\nThe diff was cut to fit; read the files themselves for the rest." : "";
  return [
    `Repository: ${facts.root} (paths are relative to it).`,
    `What was done, in the user's words:\n${facts.task}`,
    facts.plan === null ? "" : `The plan it followed:\n${facts.plan}`,
    `Commits since ${facts.base}:\n${facts.log.join("\n") || "(none: the change is not committed)"}`,
    `Changed files:\n${facts.files.join("\n") || "(none)"}`,
    `Diff:\n${facts.diff || "(empty)"}${cut}`,
  ]
    .filter((part) => part !== "")
    .join("\n\n");
}

export function assessPrompt(
  facts: ChangeFacts,
  documents: readonly string[],
  named: readonly string[],
): string {
  return [
    "Find the documentation this change makes incomplete or wrong. Read the change, then the documents " +
      "below that could describe what it touched: what users run, configure or see, and what " +
      "maintainers rely on. Judge each document you read against the code as it is now.",
    "For each relevant document answer current (it already says what is true after the change) or " +
      "update (it is missing or contradicts something the change did). Give a reason for each, and for " +
      "an update list the precise edits: which section, what it should say. Leave out documents that " +
      "have nothing to do with the change.",
    named.length === 0
      ? ""
      : `The user asked you to consider these documents; answer for each of them:\n${named.join("\n")}`,
    `Documents in the repository:\n${documents.join("\n") || "(none found)"}`,
    describeChange(facts),
  ]
    .filter((part) => part !== "")
    .join("\n\n");
}

/** One document to update, as the update step is told. */
export interface DocumentEdit {
  path: string;
  reason: string;
  edits: string[];
}

/** A claim the verifier could not back, sent back to the update step. */
export interface UnbackedClaim {
  document: string;
  claim: string;
  problem: string;
}

export function updatePrompt(args: {
  root: string;
  task: string;
  plan: string | null;
  documents: readonly DocumentEdit[];
  findings: readonly UnbackedClaim[];
}): string {
  const list = args.documents
    .map(
      (doc) =>
        `${args.root}/${doc.path}\n  why: ${doc.reason}\n${doc.edits.map((e) => `  - ${e}`).join("\n")}`,
    )
    .join("\n");
  const findings = args.findings.map((f) => `- ${f.document}: "${f.claim}" — ${f.problem}`).join("\n");
  return [
    `Update the documentation for this change: ${args.task}`,
    args.plan === null ? "" : `The plan it followed:\n${args.plan}`,
    `Change only these files, in ${args.root}, and only as far as the change needs:\n${list}`,
    findings === ""
      ? ""
      : "A check of your last edit against the code found claims the code does not back. Correct or " +
        `remove each one:\n${findings}`,
    "Read the code before you write about it: every sentence you add must be true of the code as it " +
      "is. Keep each document's voice and layout. Do not touch code, tests or any other file. Submit " +
      "the files you changed, each with one line on what you changed.",
  ]
    .filter((part) => part !== "")
    .join("\n\n");
}

export function verifyPrompt(args: {
  root: string;
  task: string;
  diff: string;
  diffTruncated: boolean;
}): string {
  const cut = args.diffTruncated
    ? "\nThe diff was cut to fit; read the documents themselves for the rest."
    : "";
  return [
    `The documentation below was just edited for this change: ${args.task}`,
    "List every claim the added or changed lines make about the software: behaviour, names, options, " +
      "defaults, commands, paths, numbers. For each claim, find the code that shows it is true and give " +
      "the file (relative to the repository), the line and a short quote of that line. Mark a claim " +
      "backed only when the code you quote shows it; otherwise mark it unbacked and say what the code " +
      "does instead, or that you found nothing.",
    `Repository: ${args.root}`,
    `Documentation diff:\n${args.diff || "(empty)"}${cut}`,
  ].join("\n\n");
}
