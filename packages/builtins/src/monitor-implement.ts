import { z } from "zod";
import { parsed } from "./monitor-decide.js";

// monitor's repair through autoimplement: the input it gives autoimplement, the branch each repair
// gets, and what the report keeps of autoimplement's result.

/** What the brief step hands autoimplement: the task from the failure and the repair's own branch. */
const briefSchema = z.object({ task: z.string(), branch: z.string() });
export type Brief = z.infer<typeof briefSchema>;

/** A branch per repair, from the run and the check: never the monitor's, never an earlier repair's. */
export function repairBranch(runId: string, check: number): string {
  return `piw/${runId.replace(/[^A-Za-z0-9_-]+/g, "-")}-repair-${check}`;
}

/**
 * autoimplement's input for a repair: branch mode, so the checkout the next check runs in holds the
 * fix; the monitor's check is its check, passing unless it fails (exit 0 or 1); it pushes or merges
 * only as the monitor's input says.
 */
export function implementInput(
  brief: unknown,
  input: { check?: string | undefined; publish: boolean; merge: boolean },
) {
  const { task, branch } = parsed(briefSchema, brief);
  return {
    task,
    branch,
    workspace: "branch" as const,
    approval: "auto" as const,
    publish: input.publish,
    merge: input.merge,
    ...(input.check === undefined
      ? {}
      : { checks: [{ name: "monitor check", command: `(${input.check}\n); test $? -le 1` }] }),
  };
}

const checkRunSchema = z.object({ round: z.number(), name: z.string(), passed: z.boolean() });

/** What a repair through autoimplement did: enough to find its commit and judge it. */
const implementedSchema = z.object({
  check: z.number().int(),
  status: z.string(),
  reason: z.string().nullable(),
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  checks: z.array(checkRunSchema),
  /** How publishing ended; null when it was not asked for. */
  publish: z.string().nullable(),
});
export type Implemented = z.infer<typeof implementedSchema>;

export const implementedOf = (saved: unknown): Implemented[] =>
  saved === undefined ? [] : parsed(z.array(implementedSchema), saved);

/** autoimplement's result, as far as the monitor reports it. */
const resultSchema = z.object({
  status: z.string(),
  reason: z.string().nullable(),
  workspace: z.object({ branch: z.string() }).nullable(),
  commit: z.object({ branch: z.string().nullable(), commit: z.string().nullable() }).nullable(),
  checks: z.array(checkRunSchema),
  publish: z.object({ outcome: z.string() }).nullable(),
});

/** The report's entry for the repair of `check`, from autoimplement's result. */
export function implementedEntry(result: unknown, check: number): Implemented {
  const { status, reason, workspace, commit, checks, publish } = parsed(resultSchema, result);
  return {
    check,
    status,
    reason,
    branch: commit?.branch ?? workspace?.branch ?? null,
    commit: commit?.commit ?? null,
    checks: checks.map(({ round, name, passed }) => ({ round, name, passed })),
    publish: publish?.outcome ?? null,
  };
}
