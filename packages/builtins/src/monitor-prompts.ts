import type { MonitorState, Observation } from "./monitor-decide.js";

// The words monitor puts before the model, and the one-line reports of each check. The goal and its
// limits come from the input; every prompt repeats them, since an isolated session has nothing else.

/** For the inspector's isolated session: it looks and judges, and never changes anything. */
export const INSPECTOR_SYSTEM_PROMPT =
  "You check whether a goal is met by looking at its target: files, commands' saved output, the repository. Read before you judge and never modify anything.";

/** What every step is told about the goal and what it may do. */
export interface Goal {
  task: string;
  stopWhen: string | null;
  limits: string | null;
  allowAct: boolean;
  allowRepair: boolean;
  allowImplement: boolean;
}

function describeGoal(goal: Goal): string {
  const may = [
    goal.allowAct ? "act (take the next step toward it)" : null,
    goal.allowRepair ? "repair (fix what fails)" : null,
    goal.allowImplement
      ? "implement (have autoimplement plan, fix, check, review and commit a code defect on a branch of its own)"
      : null,
  ]
    .filter((part) => part !== null)
    .join(", ");
  return [
    `The goal, in the requester's words:\n${goal.task}`,
    goal.stopWhen === null ? null : `Stop when: ${goal.stopWhen}`,
    `This monitor may ${may === "" ? "only watch; it may not act or repair" : may}.`,
    goal.limits === null
      ? "Limits: none stated beyond the goal; stay within it."
      : `Limits, never to be crossed: ${goal.limits}`,
  ]
    .filter((part) => part !== null)
    .join("\n\n");
}

export interface Seen {
  /** What the check command printed, when one ran this round. */
  checkOutput: string | null;
  previous: MonitorState | null;
}

export function inspectPrompt(goal: Goal, seen: Seen): string {
  const last = seen.previous;
  return [
    "Check whether this goal is met now. Look at its target with your read-only tools; change nothing.",
    "Answer goal met, pending (not yet, and nothing is wrong) or failing (something is broken that a repair " +
      "could fix: name the failure in a few stable words, the same words each time it is the same failure).",
    "Then propose the next step: wait (the goal is moving on its own, or only time helps), act (one concrete " +
      "step toward the goal that you name in action), repair (one concrete fix, named in action), or implement " +
      "(only for a failing goal whose cause is a defect in the code that needs more than a one-step fix: name " +
      "the defect and what the fix must achieve in action). Propose only what this monitor may do.",
    goal.stopWhen === null
      ? "There is no stop condition: stopWhenHolds is false."
      : "Set stopWhenHolds when the stop condition holds, and say why in summary.",
    describeGoal(goal),
    seen.checkOutput === null ? null : `The check command printed:\n${seen.checkOutput}`,
    last === null ? "This is the first check." : `Check ${last.check} said: ${last.reason}`,
  ]
    .filter((part) => part !== null)
    .join("\n\n");
}

export function actPrompt(goal: Goal, seen: Observation, check: number): string {
  return [
    `Check ${check} of the monitor found the goal not met yet: ${seen.summary}`,
    `Take this one step toward it, and nothing more: ${seen.action ?? "the next step the goal needs"}`,
    "Then report what you did and which files or systems you changed. Stay within the limits; if the step " +
      "would cross them, do nothing and say so. The next check verifies the step.",
    describeGoal(goal),
  ].join("\n\n");
}

export function repairPrompt(goal: Goal, seen: Observation, check: number): string {
  return [
    `Check ${check} of the monitor found something failing: ${seen.failure ?? seen.summary}`,
    seen.action === null ? null : `Proposed fix: ${seen.action}`,
    seen.output === null ? null : `What the check printed (its end):\n${seen.output}`,
    "Find the cause and fix it with the smallest change that makes the check pass, within the limits. " +
      "Then report what you changed. The next check verifies the fix; if the same failure comes back, the " +
      "monitor stops, so fix the cause, not the symptom.",
    describeGoal(goal),
  ]
    .filter((part) => part !== null)
    .join("\n\n");
}

/**
 * autoimplement's task for a repair: the goal, what failed, the end of what the check printed and the
 * limits. autoimplement plans it first, so the words must stand alone.
 */
export function implementTask(goal: Goal, seen: Observation, check: number, command: string | null): string {
  return [
    `Fix the code defect that makes this goal fail. Check ${check} of a monitor found: ${seen.failure ?? seen.summary}`,
    seen.action === null ? null : `What the fix must achieve: ${seen.action}`,
    command === null
      ? null
      : `The check command (exit 0: met, 1: not yet, anything else: failing):\n${command}`,
    seen.output === null ? null : `What the check printed (its end):\n${seen.output}`,
    "Fix the cause, not the symptom: the monitor checks again after the commit, and stops if the same failure comes back.",
    `The goal, in the requester's words:\n${goal.task}`,
    goal.limits === null ? null : `Limits, never to be crossed: ${goal.limits}`,
  ]
    .filter((part) => part !== null)
    .join("\n\n")
    .slice(0, 8000);
}

const GOAL_WORDS: Record<Observation["goal"], string> = {
  met: "met",
  pending: "not met yet",
  failing: "failing",
};

const clock = (isoTime: string): string => `${isoTime.slice(11, 19)} UTC`;

/** One passive line per check for the owning Pi session: what was seen and what comes next. */
export function checkReport(state: MonitorState, seen: Observation, maxChecks: number): string {
  const head = `Monitor check ${state.check} of ${maxChecks}: ${GOAL_WORDS[seen.goal]}`;
  const summary = seen.summary.trim() === "" ? "" : ` (${seen.summary.trim()})`;
  switch (state.decision) {
    case "met":
      return `${head}${summary}. The goal is met; the monitor ends.`;
    case "stop":
      return `${head}${summary}. The monitor stops: ${state.reason}`;
    case "wait":
      return `${head}${summary}. Next check at ${state.nextCheckAt === null ? "once due" : clock(state.nextCheckAt)}${state.endsBy === null ? "" : `; ends by ${clock(state.endsBy)} at the latest`}.`;
    case "act":
      return `${head}${summary}. Acting: ${state.reason}`;
    case "repair":
      return `${head}${summary}. Repairing: ${state.reason}`;
    case "implement":
      return `${head}${summary}. Repairing through autoimplement on a branch of its own: ${state.reason}`;
    default:
      return state.decision satisfies never;
  }
}
