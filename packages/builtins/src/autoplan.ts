import {
  type ActionContext,
  type ApprovalOutput,
  action,
  agent,
  approval,
  approvalChoice,
  compute,
  defineWorkflow,
  fileDigest,
  type NodeContext,
  textDigest,
  WorkflowError,
  writeTextFile,
} from "piw";
import { z } from "zod";
import { defaultPlanPath, type PlanDecision, renderPlan, utcDay } from "./autoplan-plan-file.js";
import {
  approvalPrompt,
  framePrompt,
  PLANNER_SYSTEM_PROMPT,
  planPrompt,
  proposePrompt,
  type Request,
  type Revision,
} from "./autoplan-prompts.js";
import { checkProposal, frameSchema, planSchema, proposalSchema } from "./autoplan-schemas.js";

/** How many times a person may send the proposal back before the run stops as blocked. */
const MAX_REVISIONS = 3;

/** A conversation step may take a while: the user can talk to the model between its turns. */
const STEP_TIMEOUT_MS = 30 * 60_000;

const inputSchema = z.object({
  /** The problem in the requester's words: the free words of `/workflow autoplan <words>`. */
  problem: z
    .string()
    .max(8000)
    .refine((text) => text.trim() !== "", "describe the problem to plan"),
  scope: z.string().min(1).max(2000).optional(),
  constraints: z.array(z.string().min(1).max(500)).max(20).default([]),
  planFile: z.string().min(1).max(500).regex(/\.md$/, "a markdown file path, ending in .md").optional(),
  approval: z.enum(["required", "auto", "skip"]).default("auto"),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

const requestSchema = z.object({
  problem: z.string(),
  scope: z.string().nullable(),
  constraints: z.array(z.string()),
  planFile: z.string(),
});

const approvalSchema = z.custom<ApprovalOutput>((value) => typeof value === "object" && value !== null);

const revisionSchema = z.object({ count: z.number().int().min(1), notes: z.array(z.string()) });
type RevisionCount = z.infer<typeof revisionSchema>;

const draftSchema = z.object({
  path: z.string(),
  digest: z.string(),
  text: z.string(),
  existing: z.enum(["none", "same", "different"]),
  decision: z.custom<PlanDecision>(),
});
type Draft = z.infer<typeof draftSchema>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  // Earlier nodes' outputs were checked when they were saved; a mismatch is a bug of this workflow.
  if (!result.success) throw new WorkflowError("autoplan: an earlier step's output has an unexpected shape.");
  return result.data;
}

const requestOf = ({ outputs }: Ctx): Request & { planFile: string } =>
  parsed(requestSchema, outputs.problem);

function chosenBy(gate: ApprovalOutput): PlanDecision["chosenBy"] {
  if ("skipped" in gate) return "model";
  return "automatic" in gate ? "automatic" : "person";
}

/** The model's choice and how it passed the gate. */
function decisionOf(ctx: Ctx): PlanDecision {
  const proposal = parsed(proposalSchema, ctx.outputs.propose);
  const revisions =
    ctx.outputs.revision === undefined ? [] : parsed(revisionSchema, ctx.outputs.revision).notes;
  return { ...proposal.choice, chosenBy: chosenBy(parsed(approvalSchema, ctx.outputs.approve)), revisions };
}

/** The person's note that sent the proposal back, with the proposal it answered; null on a first visit. */
function revisionOf(ctx: Ctx): Revision | null {
  if (ctx.outputs.revision === undefined) return null;
  const notes = parsed(revisionSchema, ctx.outputs.revision).notes;
  return { note: notes.at(-1) ?? "", previous: parsed(proposalSchema, ctx.outputs.propose) };
}

/** What a finished plan reports, whether it was written now or was already there. */
interface PlanFacts {
  /** As given in `planFile` or the default: relative paths are from the run's folder. */
  path: string;
  digest: string;
  title: string;
  summary: string;
  approach: string;
  chosenBy: PlanDecision["chosenBy"];
}

/**
 * What autoplan ends with. `ready`: the plan file was written (`created`, or `replaced` an older
 * plan). `unchanged`: the file already held exactly this plan, so it was not rewritten. `blocked`:
 * no plan, and why.
 */
type AutoplanResult =
  | (PlanFacts & { status: "ready"; file: "created" | "replaced"; bytes: number })
  | (PlanFacts & { status: "unchanged"; message: string })
  | { status: "blocked"; stage: "frame" | "approval" | "revisions"; reason: string };

function planFacts(ctx: Ctx, draft: Draft): PlanFacts {
  const plan = parsed(planSchema, ctx.outputs.plan);
  return {
    path: draft.path,
    digest: draft.digest,
    title: plan.title,
    summary: plan.summary,
    approach: draft.decision.approach,
    chosenBy: draft.decision.chosenBy,
  };
}

function blocked(ctx: Ctx): AutoplanResult {
  if (ctx.outputs.approve !== undefined) {
    const gate = parsed(approvalSchema, ctx.outputs.approve);
    if (approvalChoice(gate) === "stop") {
      const note = "note" in gate && gate.note ? ` Their note: ${gate.note}` : "";
      return {
        status: "blocked",
        stage: "approval",
        reason: `A person stopped the plan at the approval gate.${note}`,
      };
    }
    if (approvalChoice(gate) === "revise") {
      return {
        status: "blocked",
        stage: "revisions",
        reason: `The proposal was sent back ${MAX_REVISIONS} times and not approved; start again with a sharper problem or scope.`,
      };
    }
  }
  const frame = parsed(frameSchema, ctx.outputs.frame);
  return { status: "blocked", stage: "frame", reason: frame.blocker ?? "The problem could not be framed." };
}

/**
 * autoplan: from a problem in the requester's words to a chosen approach and a written plan, in the
 * conversation where it was asked (or isolated read-only sessions when started from a shell).
 */
export default defineWorkflow({
  name: "autoplan",
  title: "Plan a change",
  summary:
    "Frame a problem from the repository, weigh two or three approaches, choose one and write the plan as a markdown file.",
  input: inputSchema,
  textInput: "problem",
  startAt: "problem",
  nodes: {
    problem: compute({
      title: "The problem, as given",
      run: ({ input }: Ctx): z.infer<typeof requestSchema> => ({
        problem: input.problem,
        scope: input.scope ?? null,
        constraints: input.constraints,
        // Fixed here, once: a plan written on a later day of the same run keeps its name.
        planFile: input.planFile ?? defaultPlanPath(utcDay(new Date()), input.problem),
      }),
    }),
    frame: agent({
      title: "Frame the problem",
      statusDetail: "reading the repository to frame the problem",
      systemPrompt: PLANNER_SYSTEM_PROMPT,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: (ctx: Ctx) => framePrompt(requestOf(ctx)),
      output: frameSchema,
    }),
    propose: agent({
      title: "Weigh approaches",
      statusDetail: "proposing approaches and the ideal",
      systemPrompt: PLANNER_SYSTEM_PROMPT,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: (ctx: Ctx) =>
        proposePrompt(requestOf(ctx), parsed(frameSchema, ctx.outputs.frame), revisionOf(ctx)),
      output: proposalSchema,
      validate: checkProposal,
    }),
    approve: approval({
      title: "Approve the approach",
      prompt: (ctx: Ctx) => approvalPrompt(parsed(proposalSchema, ctx.outputs.propose)),
      approval: ({ input }: Ctx) => input.approval,
      default: "continue",
    }),
    revision: compute({
      title: "Send the proposal back",
      run: ({ outputs }: Ctx): RevisionCount => {
        const gate = parsed(approvalSchema, outputs.approve);
        const before =
          outputs.revision === undefined ? { count: 0, notes: [] } : parsed(revisionSchema, outputs.revision);
        const note = "note" in gate && gate.note !== undefined ? gate.note : "";
        return { count: before.count + 1, notes: [...before.notes, note] };
      },
    }),
    plan: agent({
      title: "Write the plan",
      statusDetail: "writing the plan for the chosen approach",
      systemPrompt: PLANNER_SYSTEM_PROMPT,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: (ctx: Ctx) =>
        planPrompt(
          requestOf(ctx),
          parsed(frameSchema, ctx.outputs.frame),
          parsed(proposalSchema, ctx.outputs.propose),
          decisionOf(ctx).approach,
        ),
      output: planSchema,
    }),
    draft: compute({
      title: "Render the plan",
      run: async (ctx: Ctx): Promise<Draft> => {
        const request = requestOf(ctx);
        const decision = decisionOf(ctx);
        const text = renderPlan({
          ...request,
          frame: parsed(frameSchema, ctx.outputs.frame),
          proposal: parsed(proposalSchema, ctx.outputs.propose),
          decision,
          plan: parsed(planSchema, ctx.outputs.plan),
        });
        const digest = textDigest(text);
        // Read before any write and saved with the draft: a crash retry of the write cannot mistake
        // its own half-finished write for a plan that was already there.
        const found = await fileDigest(request.planFile);
        const existing = found === null ? "none" : found === digest ? "same" : "different";
        return { path: request.planFile, digest, text, existing, decision };
      },
    }),
    write: action({
      title: "Write the plan file",
      timeoutMs: 60_000,
      run: async (ctx: ActionContext<Input>): Promise<AutoplanResult> => {
        const draft = parsed(draftSchema, ctx.outputs.draft);
        const written = await writeTextFile(ctx.effects, draft.path, draft.text);
        return {
          status: "ready",
          ...planFacts(ctx, draft),
          bytes: written.bytes,
          file: draft.existing === "none" ? "created" : "replaced",
        };
      },
    }),
    unchanged: compute({
      title: "Plan unchanged",
      run: (ctx: Ctx): AutoplanResult => {
        const draft = parsed(draftSchema, ctx.outputs.draft);
        return {
          status: "unchanged",
          ...planFacts(ctx, draft),
          message: `${draft.path} already holds this exact plan (${draft.digest}); it was not rewritten.`,
        };
      },
    }),
    blocked: compute({ title: "Blocked", run: blocked }),
  },
  edges: {
    problem: { to: "frame" },
    frame: { to: ["propose", "blocked"], route: (frame) => (frame.blocker === null ? "propose" : "blocked") },
    propose: { to: "approve" },
    approve: {
      to: ["plan", "blocked", "revision"],
      route: (gate) => {
        const choice = approvalChoice(gate);
        switch (choice) {
          case "continue":
          case "skipped":
            return "plan";
          case "stop":
            return "blocked";
          case "revise":
            return "revision";
          default:
            return choice satisfies never;
        }
      },
    },
    revision: {
      to: ["propose", "blocked"],
      route: (revision) => (revision.count > MAX_REVISIONS ? "blocked" : "propose"),
    },
    plan: { to: "draft" },
    draft: {
      to: ["write", "unchanged"],
      route: (draft) => (draft.existing === "same" ? "unchanged" : "write"),
    },
    write: { to: "done" },
    unchanged: { to: "done" },
    blocked: { to: "done" },
  },
  presentationPrompt:
    "Say where the plan was written, then summarise it in a few lines: the chosen approach and why, then " +
    "its steps. If it is unchanged, say the file already held this plan and was not rewritten. If it is " +
    "blocked, give the reason and what would unblock it. Quote the result; add nothing of your own.",
});
