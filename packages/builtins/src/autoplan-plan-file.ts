import type { Frame, Plan, Proposal } from "./autoplan-schemas.js";

// The plan file's name and text, as pure functions of saved facts: the same facts give the same bytes,
// which is what lets a replan that changes nothing be recognised by its digest.

const SLUG_MAX = 60;

/** A file-name slug of the problem: lower-case ASCII words joined by `-`, cut at a word; `plan` if none. */
export function planSlug(problem: string): string {
  const words = problem
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  let slug = "";
  for (const word of words) {
    const next = slug === "" ? word : `${slug}-${word}`;
    if (next.length > SLUG_MAX) break;
    slug = next;
  }
  return slug === "" ? (words[0]?.slice(0, SLUG_MAX) ?? "plan") : slug;
}

/** `docs/plans/<yyyy-mm-dd>-<slug>.md`, relative to the run's folder. */
export function defaultPlanPath(day: string, problem: string): string {
  return `docs/plans/${day}-${planSlug(problem)}.md`;
}

/** A date as `yyyy-mm-dd` in UTC, so the name does not depend on the machine's time zone. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** How the approach was chosen, as the plan records it. */
export interface PlanDecision {
  approach: string;
  reasons: readonly string[];
  /** `person`: a person answered the gate; `automatic`: its default was taken; `model`: no gate was asked. */
  chosenBy: "person" | "automatic" | "model";
  /** The notes a person sent back with each revision, oldest first. */
  revisions: readonly string[];
}

export interface PlanFacts {
  problem: string;
  scope: string | null;
  constraints: readonly string[];
  frame: Frame;
  proposal: Proposal;
  decision: PlanDecision;
  plan: Plan;
}

const bullets = (items: readonly string[]): string[] =>
  items.length === 0 ? ["- (none)"] : items.map((item) => `- ${oneLine(item)}`);

/** Model text inside a list item or heading stays on its line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function quoted(text: string): string[] {
  return text.split("\n").map((line) => (line === "" ? ">" : `> ${line}`));
}

function section(title: string, body: readonly string[]): string[] {
  return [`## ${title}`, "", ...body, ""];
}

const CHOSEN_BY: Record<PlanDecision["chosenBy"], string> = {
  person: "the model's choice, approved by a person at the approval gate",
  automatic: "the model's choice, taken automatically at the approval gate",
  model: "the model's choice",
};

/** The plan as markdown. Nothing run-specific (no run ID, no time) goes in, so its digest is its content. */
export function renderPlan(facts: PlanFacts): string {
  const { frame, proposal, decision, plan } = facts;
  const problem = [
    ...quoted(facts.problem),
    "",
    `Scope: ${facts.scope === null ? "(not given)" : oneLine(facts.scope)}`,
    "",
    "Constraints:",
    "",
    ...bullets(facts.constraints),
  ];
  const framing = [
    `**Goal.** ${oneLine(frame.goal)}`,
    "",
    "**Success criteria**",
    "",
    ...bullets(frame.successCriteria),
    "",
    "**In scope**",
    "",
    ...bullets(frame.inScope),
    "",
    "**Out of scope**",
    "",
    ...bullets(frame.outOfScope),
    "",
    "**What we control**",
    "",
    ...bullets(frame.weControl),
    "",
    "**Outside our control**",
    "",
    ...bullets(frame.outsideOurControl),
    "",
    "**Evidence**",
    "",
    ...bullets(frame.evidence.map((item) => `\`${oneLine(item.file)}\`: ${item.fact}`)),
  ];
  const approaches = proposal.approaches.flatMap((approach, i) => [
    `### ${i + 1}. ${oneLine(approach.name)} (effort: ${approach.effort})`,
    "",
    oneLine(approach.summary),
    "",
    "Pros:",
    "",
    ...bullets(approach.pros),
    "",
    "Cons:",
    "",
    ...bullets(approach.cons),
    "",
  ]);
  const ideal = [
    oneLine(proposal.ideal.endState),
    "",
    "It depends on:",
    "",
    ...bullets(proposal.ideal.dependsOn),
  ];
  const choice = [
    `**${oneLine(decision.approach)}**: ${CHOSEN_BY[decision.chosenBy]}.`,
    "",
    ...bullets(decision.reasons),
    ...(decision.revisions.length === 0
      ? []
      : ["", "Revised at a person's request:", "", ...bullets(decision.revisions)]),
  ];
  const steps = plan.steps.flatMap((step, i) => [
    `### ${i + 1}. ${oneLine(step.title)}`,
    "",
    step.details.trim(),
    "",
    `Files: ${step.files.length === 0 ? "(none named)" : step.files.map((file) => `\`${oneLine(file)}\``).join(", ")}`,
    "",
    `Verify: ${oneLine(step.verify)}`,
    "",
  ]);
  const lines = [
    `# ${oneLine(plan.title)}`,
    "",
    oneLine(plan.summary),
    "",
    ...section("Problem, in the requester's words", problem),
    ...section("Frame", framing),
    ...section("Approaches", approaches.slice(0, -1)),
    ...section("The ideal", ideal),
    ...section("Decision", choice),
    ...section("Steps", steps.slice(0, -1)),
    ...section("Tests", bullets(plan.tests)),
    ...section(
      "Risks",
      bullets(plan.risks.map((risk) => `${oneLine(risk.risk)} Mitigation: ${oneLine(risk.mitigation)}`)),
    ),
    ...section("Open questions", bullets(plan.openQuestions)),
  ];
  return `${lines.join("\n").trimEnd()}\n`;
}
