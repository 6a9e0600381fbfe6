import { z } from "zod";
import type { CheckResult } from "./autoimplement-checks.js";
import type { RoundFinding } from "./autoimplement-review.js";

// The words autoimplement's conversation steps put before the model, and the record each step
// submits of what it changed. In a conversation the model also has the user's context; from a shell
// the steps run isolated with edit tools, so each prompt says where to work and what to submit.

/** For the isolated sessions of a run with no conversation (`piw run autoimplement`). */
export const IMPLEMENTER_SYSTEM_PROMPT =
  "You implement a planned change in a software repository. Work only in the folder you are given, " +
  "keep the change to what the plan asks, add or update tests that prove it, and report exactly what you changed.";

const fileChange = z.object({
  path: z.string().min(1).max(500).describe("Relative to the workspace"),
  change: z.enum(["added", "modified", "deleted"]),
  why: z.string().min(1).max(400),
});

/** What an implement, fix or challenge step says it did: the run's durable record of the change. */
export const changeSchema = z.object({
  status: z
    .enum(["done", "blocked"])
    .describe("blocked only when the work cannot be done in this repository without a person"),
  summary: z.string().min(1).max(2000),
  files: z.array(fileChange).max(200),
  blocker: z.string().min(1).max(1000).nullable().describe("Why it is blocked; null when done"),
});
export type Change = z.infer<typeof changeSchema>;

/** The change record's own consistency, beyond its shape. */
export function checkChange(change: Change): string | undefined {
  if (change.status === "blocked" && change.blocker === null) return "say in blocker why the work is blocked";
  if (change.status === "done" && change.blocker !== null)
    return "blocker must be null when the status is done";
  return undefined;
}

export interface Where {
  /** The workspace folder every step works in. */
  path: string;
  branch: string;
}

function place(where: Where): string {
  return `Work in ${where.path} (branch ${where.branch}): read, change and run commands there, nowhere else. Do not commit; the run commits when the checks and the review pass.`;
}

const progressHint =
  "While you work, report progress through the workflow tool's update action (done of total steps " +
  "of the plan), so the run's views show how far you are.";

export function implementPrompt(where: Where, plan: { path: string; text: string }): string {
  return [
    `Implement the plan in ${plan.path}.`,
    place(where),
    "Follow the plan's steps in order. Add or update the tests it names, and make them pass. Change " +
      "nothing the plan does not ask for.",
    progressHint,
    "When you are done, submit every file you changed with a line on why. If something outside this " +
      "repository stops you, submit status blocked with the reason instead of guessing.",
    "The plan:",
    plan.text,
  ].join("\n\n");
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);

export function fixChecksPrompt(where: Where, failing: readonly CheckResult[]): string {
  return [
    `These checks fail on the change in ${where.path}. Fix the change so that they pass.`,
    place(where),
    "Fix the cause, not the check: do not skip, weaken or delete a test or a check to make it pass.",
    ...failing.map((check) =>
      [
        `Check "${check.name}": \`${check.command}\` exited with ${check.exitCode ?? "no exit code"}.`,
        check.omittedLines > 0
          ? `The last lines of its output (${check.omittedLines} earlier lines left out):`
          : "Its output:",
        "```",
        check.tail,
        "```",
      ].join("\n"),
    ),
    "Submit the files you changed. Status blocked only if the failure cannot be fixed in this repository.",
  ].join("\n\n");
}

export function fixFindingsPrompt(where: Where, findings: readonly RoundFinding[], polish: boolean): string {
  return [
    polish
      ? `Reviewers found these smaller problems (P2) in the change in ${where.path}. Fix them once; the change is committed after its checks pass, without another review.`
      : `Reviewers found these problems (P0/P1) in the change in ${where.path}. Fix every one; the change is reviewed again after its checks pass.`,
    place(where),
    "Each finding, with its file, line and the text on it:",
    json(
      findings.map(({ severity, title, detail, file, line, quote, lens }) => ({
        severity,
        lens,
        title,
        detail,
        at: `${file}:${line}`,
        quote,
      })),
    ),
    "If a finding is wrong, leave the code and say why in the summary. Submit the files you changed.",
  ].join("\n\n");
}

export function challengePrompt(where: Where, claim: Change): string {
  return [
    `You said the work in ${where.path} is blocked: ${claim.blocker ?? "(no reason given)"}`,
    place(where),
    "Before the run accepts that, check it once more. Is the obstacle really outside this repository " +
      "and outside what you can do (a missing credential, a decision only a person can make, a service " +
      "that is down)? Could a smaller step, another approach or a documented assumption get past it?",
    "If you can go on, do the work and submit status done with the files you changed. If it is truly " +
      "blocked, submit status blocked with the reason a person needs to act on.",
  ].join("\n\n");
}
