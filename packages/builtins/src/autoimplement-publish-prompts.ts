import type { CheckLog } from "./autoimplement-publish-scripts.js";

// The words the fix step of autoimplement's publish reads: which checks failed on the PR and the end
// of their logs, bounded, so the model fixes the cause rather than guessing from names alone.

export interface FixFacts {
  folder: string;
  branch: string;
  pr: { number: number; url: string };
  round: number;
  maxRounds: number;
  failing: readonly string[];
  logs: readonly CheckLog[];
}

export function fixPrompt(facts: FixFacts): string {
  const logs = facts.logs
    .filter((entry) => entry.log !== "")
    .map((entry) => `--- ${entry.name} (last lines of its log)\n${entry.log}`);
  return [
    `The checks of pull request #${facts.pr.number} (${facts.pr.url}) failed. Fix the cause in the ` +
      `repository at ${facts.folder}, on branch ${facts.branch}. This is fix round ${facts.round} of ` +
      `at most ${facts.maxRounds}.`,
    `Failing checks:\n${facts.failing.map((name) => `- ${name}`).join("\n")}`,
    logs.length === 0 ? "No log was available for these checks; reproduce them locally." : logs.join("\n\n"),
    "Change only what the failure needs, and run the failing check's command locally when you can. Do " +
      "not commit or push: the workflow commits your changes and pushes them, then watches the checks " +
      "again. Submit a one-paragraph summary of the cause and the fix, and the files you changed.",
  ].join("\n\n");
}

/** The commit message of a fix round's changes. */
export function fixCommitMessage(round: number, failing: readonly string[]): string {
  const names = failing.slice(0, 5).join(", ");
  const more = failing.length > 5 ? ` and ${failing.length - 5} more` : "";
  return `Fix failing checks (round ${round}): ${names}${more}`.slice(0, 300);
}
