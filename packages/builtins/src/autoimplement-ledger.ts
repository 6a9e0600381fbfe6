import { WorkflowError } from "piw";
import { z } from "zod";
import type { CheckResult } from "./autoimplement-checks.js";
import { type Change, changeSchema } from "./autoimplement-prompts.js";
import type { Triage } from "./autoimplement-review.js";

// The run's own bookkeeping between its loops: which step last reported a change, how many fix
// rounds the checks have taken, and where each check result sends the run.

const CHANGE_STEPS = ["implement", "fix", "challenge"] as const;
export type ChangeStep = (typeof CHANGE_STEPS)[number];

interface LedgerEntry extends Change {
  step: ChangeStep;
}

/** Every change step's report in the order they came, and the last one seen of each step. */
export interface Ledger {
  entries: LedgerEntry[];
  seen: Partial<Record<ChangeStep, string>>;
  last: LedgerEntry;
}

export const ledgerSchema = z.custom<Ledger>((value) => typeof value === "object" && value !== null);

/**
 * Adds the change step that ran since the ledger was last written: the one whose saved output
 * differs from the one the ledger saw (exactly one step runs between two ledger visits).
 */
export function recordChange(
  previous: Ledger | undefined,
  outputs: Partial<Record<ChangeStep, unknown>>,
): Ledger {
  const seen = { ...(previous?.seen ?? {}) };
  const entries = [...(previous?.entries ?? [])];
  let last = previous?.last;
  for (const step of CHANGE_STEPS) {
    const output = outputs[step];
    if (output === undefined) continue;
    const text = JSON.stringify(output);
    if (seen[step] === text) continue;
    seen[step] = text;
    last = { step, ...changeSchema.parse(output) };
    entries.push(last);
  }
  if (last === undefined)
    throw new WorkflowError("autoimplement: the ledger was reached before any change step.");
  return { entries, seen, last };
}

/** Where the ledger sends the run after a change step. */
export function afterChange(ledger: Ledger): "detect" | "verify" | "challenge" | "stop" {
  const { step, status } = ledger.last;
  if (status === "blocked") return step === "challenge" ? "stop" : "challenge";
  return step === "fix" ? "verify" : "detect";
}

/** One check as the summary lists it. */
export interface CheckRun {
  round: number;
  name: string;
  command: string;
  passed: boolean;
  exitCode: number | null;
}

/**
 * What a round of checks decides. `fix`: a check failed and fix rounds remain. `review`: all
 * passed. `commit`: all passed after the P2 fixes, which take no further review. `stop`: a check
 * still fails after `maxRounds` fix rounds.
 */
export interface Verdict {
  next: "fix" | "review" | "commit" | "stop";
  round: number;
  /** Fix rounds the checks have sent the run to so far. */
  fixRounds: number;
  failing: CheckResult[];
  /** Every check of every round so far. */
  runs: CheckRun[];
}

export const verdictSchema = z.custom<Verdict>((value) => typeof value === "object" && value !== null);

export function judgeChecks(
  results: readonly CheckResult[],
  previous: Verdict | undefined,
  triage: Triage | undefined,
  maxRounds: number,
): Verdict {
  const round = (previous?.round ?? 0) + 1;
  const runs = [
    ...(previous?.runs ?? []),
    ...results.map(({ name, command, passed, exitCode }) => ({ round, name, command, passed, exitCode })),
  ];
  const failing = results.filter((result) => !result.passed);
  const before = previous?.fixRounds ?? 0;
  if (failing.length > 0) {
    const fixRounds = before + 1;
    return { next: fixRounds > maxRounds ? "stop" : "fix", round, fixRounds, failing, runs };
  }
  // After the one P2 pass the change is not reviewed again: passing checks commit it.
  const next = triage?.next === "polish" ? "commit" : "review";
  return { next, round, fixRounds: before, failing: [], runs };
}
