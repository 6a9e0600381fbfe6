import type { Ledger } from "./autoimplement-ledger.js";
import type { RoundFinding, Severity, Triage } from "./autoimplement-review.js";

// What autoimplement ends with: the commands it ran and their results, the review findings by
// severity and what became of each, and where the change is.

type FindingOutcome = "fixed" | "fixed once (P2)" | "noted" | "open";

export interface ReportedFinding {
  severity: Severity;
  lens: string;
  round: number;
  title: string;
  at: string;
  outcome: FindingOutcome;
}

/**
 * What became of each finding of a review round: P0/P1 sent to a fix (and reviewed again) are
 * `fixed`; P2 fixed in the one polish pass are `fixed once (P2)`; P3, and P2 past the polish, are
 * `noted`; P0/P1 of a round that stopped the run stay `open`.
 */
export function findingOutcomes(round: Triage): ReportedFinding[] {
  return round.findings.map((finding) => ({
    severity: finding.severity,
    lens: finding.lens,
    round: finding.round,
    title: finding.title,
    at: `${finding.file}:${finding.line}`,
    outcome: outcomeOf(finding, round),
  }));
}

function outcomeOf(finding: RoundFinding, round: Triage): FindingOutcome {
  const acted = round.toFix.some(
    (f) => f.title === finding.title && f.file === finding.file && f.line === finding.line,
  );
  if (!acted) return "noted";
  switch (round.next) {
    case "fix":
      return "fixed";
    case "polish":
      return "fixed once (P2)";
    case "stop":
      return "open";
    case "commit":
      return "noted";
    default:
      return round.next satisfies never;
  }
}

/** The change steps as the ledger holds them: what the model said it changed, step by step. */
export function changeRecord(ledger: Ledger | undefined) {
  return (ledger?.entries ?? []).map(({ step, status, summary, files }) => ({
    step,
    status,
    summary,
    files: files.map((file) => `${file.change} ${file.path}`),
  }));
}
