import { z } from "zod";

// What autoplan's agent steps must submit: each is checked before it is saved, so the plan file is
// rendered from typed facts, never from free-form text.

const line = z.string().min(1).max(400);
const paragraph = z.string().min(1).max(1500);

export const frameSchema = z.object({
  goal: paragraph,
  successCriteria: z.array(line).min(1).max(10),
  inScope: z.array(line).max(15),
  outOfScope: z.array(line).max(15),
  weControl: z.array(line).max(15),
  outsideOurControl: z.array(line).max(15),
  evidence: z
    .array(z.object({ file: z.string().min(1).max(500), fact: line }))
    .max(20)
    .describe("What you read in the repository that the frame rests on"),
  blocker: z
    .string()
    .min(1)
    .max(600)
    .nullable()
    .describe("Why no honest plan can be written; null when one can"),
});
export type Frame = z.infer<typeof frameSchema>;

const approachSchema = z.object({
  name: z.string().min(1).max(80),
  summary: paragraph,
  pros: z.array(line).min(1).max(8),
  cons: z.array(line).min(1).max(8),
  effort: z.enum(["small", "medium", "large"]),
});

export const proposalSchema = z.object({
  approaches: z.array(approachSchema).min(2).max(3),
  ideal: z.object({
    endState: paragraph,
    dependsOn: z.array(line).max(10).describe("What the ideal needs that is outside our control"),
  }),
  choice: z.object({
    approach: z.string().min(1).max(80).describe("The name of one of the approaches"),
    reasons: z.array(line).min(1).max(6),
  }),
});
export type Proposal = z.infer<typeof proposalSchema>;

/** The proposal's own consistency, beyond its shape. */
export function checkProposal(proposal: Proposal): string | undefined {
  const names = proposal.approaches.map((approach) => approach.name.trim().toLowerCase());
  if (new Set(names).size !== names.length) return "give each approach a different name";
  if (!names.includes(proposal.choice.approach.trim().toLowerCase()))
    return `choice.approach must be the name of one of the approaches: ${proposal.approaches.map((a) => a.name).join(", ")}`;
  return undefined;
}

export const planSchema = z.object({
  title: z.string().min(1).max(120),
  summary: paragraph,
  steps: z
    .array(
      z.object({
        title: z.string().min(1).max(160),
        details: z.string().min(1).max(3000),
        files: z.array(z.string().min(1).max(500)).max(20),
        verify: line,
      }),
    )
    .min(1)
    .max(20),
  tests: z.array(line).max(15),
  risks: z.array(z.object({ risk: line, mitigation: line })).max(10),
  openQuestions: z.array(line).max(10),
});
export type Plan = z.infer<typeof planSchema>;
