import { z } from "zod";
import { commandFailure, type Observation, outputTail, parsed } from "./monitor-decide.js";
import type { Ctx, Input } from "./monitor-input.js";

// What one round of monitor sees: the check command's result, the read-only inspector's judgement,
// and the authority the input grants that judgement.

const checkSchema = z.object({ met: z.boolean(), output: z.string(), inspect: z.boolean() });

export const inspectionSchema = z.object({
  goal: z.enum(["met", "pending", "failing"]),
  summary: z.string().min(1).max(600),
  evidence: z.array(z.string().min(1).max(400)).max(10),
  /** A few stable words naming what fails; null unless goal is failing. */
  failure: z.string().min(1).max(200).nullable(),
  stopWhenHolds: z.boolean(),
  next: z.enum(["wait", "act", "repair", "implement"]),
  /** The one step for act or repair, or what implement's fix must achieve; null for wait. */
  action: z.string().min(1).max(2000).nullable(),
});
type Inspection = z.infer<typeof inspectionSchema>;

/** The authority the input grants is enforced here: a proposal beyond it is refused, and the model answers again. */
export function checkInspection(out: Inspection, { input }: Ctx): string | undefined {
  if (out.goal === "failing" && out.failure === null) return "a failing goal names its failure in failure";
  if (out.goal !== "failing" && out.failure !== null) return "failure is null unless the goal is failing";
  if (out.stopWhenHolds && input.stopWhen === undefined)
    return "there is no stop condition: stopWhenHolds is false";
  if (out.next !== "wait" && !input.allow.includes(out.next)) {
    return `this monitor may not ${out.next} (its input allows: ${input.allow.join(", ") || "only watching"}); propose wait`;
  }
  if (out.next === "implement" && out.goal !== "failing")
    return "implement repairs a failing goal only; propose another step";
  if (out.next !== "wait" && out.action === null) return `name the one step to ${out.next} in action`;
  return undefined;
}

/** A failing check goes to the inspector when implement is allowed: it tells a code defect from the rest. */
export const judgesFailures = (input: Input): boolean => input.allow.includes("implement");

/** What the latest check printed: its routed failure's output (a failure stays until it passes), else its result. */
export function checkOutputOf({ input, outputs, failures }: Ctx): string | null {
  if (input.check === undefined) return null;
  const failed = failures.check;
  if (failed === undefined) return parsed(checkSchema, outputs.check).output;
  return failed.shell === undefined ? failed.message : outputTail(failed.shell.stdout, failed.shell.stderr);
}

/** This round's observation: the check command's result, and the inspector's when it ran this round. */
export function observationOf(ctx: Ctx): Observation {
  const { input, outputs, failures } = ctx;
  const failed = failures.check;
  if (input.check !== undefined && failed !== undefined) {
    const shell = failed.shell;
    const failure =
      failed.status === "timed_out"
        ? "the check timed out"
        : commandFailure(shell?.exitCode ?? null, shell?.stdout ?? "", shell?.stderr ?? "");
    const output = checkOutputOf(ctx);
    if (judgesFailures(input)) {
      // The command names the failure (stable across checks); the inspector proposes the repair.
      const seen = parsed(inspectionSchema, outputs.inspect);
      return {
        source: "inspector",
        goal: "failing",
        summary: seen.summary,
        failure,
        stop: seen.stopWhenHolds ? seen.summary : null,
        next: seen.next,
        action: seen.action,
        output,
      };
    }
    return {
      source: "check",
      goal: "failing",
      summary: failure,
      failure,
      stop: null,
      next: null,
      action: null,
      output,
    };
  }
  const checked = input.check === undefined ? null : parsed(checkSchema, outputs.check);
  if (checked !== null && !checked.inspect) {
    const last =
      checked.output
        .split("\n")
        .filter((line) => line.trim() !== "")
        .at(-1) ?? "";
    return {
      source: "check",
      goal: checked.met ? "met" : "pending",
      summary: last.slice(0, 600),
      failure: null,
      stop: null,
      next: null,
      action: null,
      output: null,
    };
  }
  const seen = parsed(inspectionSchema, outputs.inspect);
  return {
    source: "inspector",
    // The check command's exit code is the authority on the goal; the inspector judges the rest.
    goal:
      checked === null ? seen.goal : checked.met ? "met" : seen.goal === "failing" ? "failing" : "pending",
    summary: seen.summary,
    failure: seen.failure,
    stop: seen.stopWhenHolds ? seen.summary : null,
    next: seen.next,
    action: seen.action,
    output: checked?.output ?? null,
  };
}
