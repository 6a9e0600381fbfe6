import type { NodeContext } from "piw";
import { z } from "zod";
import type { Limits } from "./monitor-decide.js";
import type { Goal } from "./monitor-prompts.js";

// monitor's input, and what its prompts (the goal) and its decisions (the limits) read of it.

export const MINUTE_MS = 60_000;

export const inputSchema = z.object({
  /** The goal in the requester's words: the free words of `piw run monitor <words>`. */
  task: z
    .string()
    .max(8000)
    .refine((text) => text.trim() !== "", "describe the goal to monitor"),
  /** A shell command: exit 0 means met, 1 not yet, anything else failing. */
  check: z.string().min(1).max(4000).optional(),
  /** Minutes between checks; a fraction is allowed (0.05 is 3 seconds). */
  everyMinutes: z.number().min(0.01).max(1440).default(10),
  maxChecks: z.number().int().min(1).max(1000).default(100),
  /** A condition in words that ends the loop early; the read-only inspector judges it. */
  stopWhen: z.string().min(1).max(2000).optional(),
  /** The latest time to check, with its offset (`2026-12-04T18:00:00Z`). */
  deadline: z.iso.datetime({ offset: true }).optional(),
  /**
   * What the monitor may do besides watching: the goal's authority, enforced on every decision.
   * `implement` (repairing a code defect through autoimplement) is granted only when named.
   */
  allow: z
    .array(z.enum(["act", "repair", "implement"]))
    .max(3)
    .default(["act", "repair"]),
  /** An implement repair publishes its branch as a pull request (autoimplement's `publish`). */
  publish: z.boolean().default(false),
  /** With `publish`: an implement repair merges its pull request once its checks pass. */
  merge: z.boolean().default(false),
  /** What act and repair must never do, in words; every step is told. */
  limits: z.string().min(1).max(2000).optional(),
  checkTimeoutMinutes: z.number().min(0.1).max(240).default(10),
});
export type Input = z.output<typeof inputSchema>;
export type Ctx = NodeContext<Input>;

export const goalOf = (input: Input): Goal => ({
  task: input.task.trim(),
  stopWhen: input.stopWhen ?? null,
  limits: input.limits ?? null,
  allowAct: input.allow.includes("act"),
  allowRepair: input.allow.includes("repair"),
  allowImplement: input.allow.includes("implement"),
});

export const limitsOf = (input: Input): Limits => ({
  everyMs: Math.round(input.everyMinutes * MINUTE_MS),
  maxChecks: input.maxChecks,
  deadline: input.deadline === undefined ? null : Date.parse(input.deadline),
  allowAct: input.allow.includes("act"),
  allowRepair: input.allow.includes("repair"),
  allowImplement: input.allow.includes("implement"),
});
