import { type ZodType, z } from "zod";
import type { NodeContext } from "../compiler/compiled-workflow.js";
import type { CheckpointNode, NodeText } from "./node-specs.js";

/**
 * Whether an approval gate is asked: `required` waits for a person; `auto` takes the default at once
 * and records it as automatic; `skip` passes the gate with no choice at all (`{ skipped: true }`).
 */
export type ApprovalMode = "required" | "auto" | "skip";

/** The choices of a gate that names none. */
export const DEFAULT_APPROVAL_CHOICES = ["continue", "stop", "revise"] as const;
export type DefaultApprovalChoice = (typeof DEFAULT_APPROVAL_CHOICES)[number];

/** What a person answers: one of the choices, with a note (required for the choices that need one). */
export interface ApprovalAnswer<C extends string = DefaultApprovalChoice> {
  choice: C;
  note?: string;
}

/**
 * What the gate's node outputs: a person's answer; the default taken with no person (`auto` mode, or
 * its deadline passed); or a skipped gate, which records no choice.
 */
export type ApprovalOutput<C extends string = DefaultApprovalChoice> =
  | ApprovalAnswer<C>
  | { choice: C; automatic: "auto" | "deadline" }
  | { skipped: true };

/** The choice an output routes on: the choice, or `"skipped"` for a skipped gate. */
export function approvalChoice<C extends string>(output: ApprovalOutput<C>): C | "skipped" {
  return "skipped" in output ? "skipped" : output.choice;
}

/** The gate's run-time settings, carried on its checkpoint node for the compiler. */
export interface ApprovalGate<I = unknown> {
  readonly mode: ApprovalMode | { bivariant(ctx: NodeContext<I>): ApprovalMode }["bivariant"];
  readonly defaultChoice: string;
  /** After this many ms without an answer the host takes the default; null: no deadline. */
  readonly deadlineMs: number | null;
}

export interface ApprovalOptions<I, C extends string> {
  title?: string;
  prompt: NodeText<I>;
  /** The choices, in the order a person sees them; default `continue`, `stop`, `revise`. */
  choices?: readonly C[];
  /** Choices whose answer must carry a non-empty `note`; default `["revise"]` when it is a choice. */
  noteRequired?: readonly NoInfer<C>[];
  /** The choice `auto` mode and a passed deadline take; default the first choice. */
  default?: NoInfer<C>;
  /** Whether it is asked (typically from the workflow's input); default `"required"`. */
  approval?: ApprovalMode | ((ctx: NodeContext<I>) => ApprovalMode);
  /** Take the default automatically when nobody answered within this many ms (1 s to 30 days). */
  deadlineMs?: number;
}

/** A checkpoint node built by `approval()`. */
export interface ApprovalNode<I = unknown, C extends string = DefaultApprovalChoice>
  extends CheckpointNode<I, ApprovalOutput<C>> {
  readonly gate: ApprovalGate<I>;
}

function answerSchemaOf(choices: readonly string[], noteRequired: readonly string[]): ZodType {
  const note = z.string().min(1).max(4000);
  const shapes = choices.map((choice) =>
    z.strictObject({
      choice: z.literal(choice),
      note: noteRequired.includes(choice) ? note : note.optional(),
    }),
  );
  const [first, ...rest] = shapes;
  if (first === undefined) return z.never();
  return rest.length === 0 ? first : z.discriminatedUnion("choice", [first, ...rest]);
}

/**
 * An approval gate: a checkpoint with typed choices that only a person answers (Pi's dialog,
 * `/workflow answer`, `piw answer`), that `approval: "auto" | "skip"` passes without asking, and that
 * can take its default automatically after a deadline (taken by the host's clock, recorded as automatic).
 */
export function approval<I = unknown, const C extends string = DefaultApprovalChoice>(
  options: ApprovalOptions<I, C>,
): ApprovalNode<I, C> {
  const choices: readonly string[] = options.choices ?? DEFAULT_APPROVAL_CHOICES;
  const noteRequired: readonly string[] =
    options.noteRequired ?? (choices.includes("revise") ? ["revise"] : []);
  // The compiler checks the default (a choice that needs no note) and the deadline, as compile errors.
  const defaultChoice = options.default ?? choices[0] ?? "";
  return {
    kind: "checkpoint",
    title: options.title ?? "Approval",
    prompt: options.prompt,
    answer: answerSchemaOf(choices, noteRequired),
    answeredBy: "human",
    gate: { mode: options.approval ?? "required", defaultChoice, deadlineMs: options.deadlineMs ?? null },
  } as ApprovalNode<I, C>;
}
