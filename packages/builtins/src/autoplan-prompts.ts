import type { Frame, Proposal } from "./autoplan-schemas.js";

// The words autoplan's steps put before the model. They are product text: in a conversation the
// model also has the user's context, in an isolated session it has only these, so each says what to
// look at and what a good answer holds, and no more.

/** For the isolated sessions of a run with no conversation (`piw run autoplan`). */
export const PLANNER_SYSTEM_PROMPT =
  "You plan changes to a software repository. Read before you judge, cite only what you have read, and never modify a file.";

/** What the requester asked for, as every step sees it. */
export interface Request {
  problem: string;
  scope: string | null;
  constraints: readonly string[];
}

function describeRequest(request: Request): string {
  const constraints =
    request.constraints.length === 0
      ? "Constraints: none given."
      : `Constraints:\n${request.constraints.map((c) => `- ${c}`).join("\n")}`;
  return [
    `The problem, in the requester's words:\n${request.problem}`,
    request.scope === null
      ? "Scope: not given; infer it conservatively from the problem."
      : `Scope: ${request.scope}`,
    constraints,
  ].join("\n\n");
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);

export function framePrompt(request: Request): string {
  return [
    "Frame this problem before anyone proposes a solution. Read the repository in the current folder " +
      "(its README, the code and docs the problem touches) and change nothing.",
    "State the goal, observable success criteria, what is in and out of scope, what we control (code " +
      "and interfaces this repository owns) and what we do not (other projects, services, people). " +
      "List the files you read that the frame rests on.",
    "Set blocker only when no honest plan can be written from here (the problem contradicts itself, or " +
      "needs a decision or access only the requester has); otherwise it is null.",
    describeRequest(request),
  ].join("\n\n");
}

/** A person's note that sent the previous proposal back. */
export interface Revision {
  note: string;
  previous: Proposal;
}

export function proposePrompt(request: Request, frame: Frame, revision: Revision | null): string {
  return [
    "Propose two or three materially different approaches to this framed problem, each with its pros, " +
      "cons and effort. Do not implement anything.",
    "Then describe the ideal end state, even where it goes beyond the scope, and name what it depends " +
      "on that is outside our control.",
    "Choose one approach, by its name, with your reasons: the ideal when it is in scope and within " +
      "our control, otherwise the strongest in-scope approach that leads towards it. Prefer the simpler " +
      "one when results are equal.",
    ...(revision === null
      ? []
      : [
          `A person sent your previous proposal back with this note; address it:\n${revision.note}`,
          `Previous proposal:\n${json(revision.previous)}`,
        ]),
    describeRequest(request),
    `Frame:\n${json(frame)}`,
  ].join("\n\n");
}

export function planPrompt(request: Request, frame: Frame, proposal: Proposal, approach: string): string {
  const chosen = proposal.approaches.find(
    (a) => a.name.trim().toLowerCase() === approach.trim().toLowerCase(),
  );
  return [
    `Write the implementation plan for the chosen approach, "${approach}". Do not implement it.`,
    "Give ordered steps; for each, what changes, in which files, and how to verify it. Then the tests " +
      "to add, the risks with their mitigations, and the questions still open. Stay inside the scope " +
      "and what we control; read the files you name before you name them.",
    describeRequest(request),
    `Frame:\n${json(frame)}`,
    `Chosen approach:\n${json(chosen ?? approach)}`,
    `The ideal it leads towards:\n${json(proposal.ideal)}`,
  ].join("\n\n");
}

/** The question a person answers at the gate: the model's choice, its reasons and the alternatives. */
export function approvalPrompt(proposal: Proposal): string {
  const others = proposal.approaches
    .filter((a) => a.name.trim().toLowerCase() !== proposal.choice.approach.trim().toLowerCase())
    .map((a) => a.name);
  return [
    `Plan with "${proposal.choice.approach}"? ${proposal.choice.reasons.join(" ")}`,
    `Other approaches: ${others.join(", ") || "none"}. Ideal: ${proposal.ideal.endState}`,
    "Continue with this choice, stop, or revise with a note that says what to change.",
  ].join("\n");
}
