import type { RunSnapshot, SavedVisit } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, checkpoint, compileWorkflow, compute, defineWorkflow } from "../src/index.js";
import { resumeProblem } from "../src/compiler/resume-compatibility.js";

/** plan (agent) -> ok (checkpoint) -> apply (compute), with the schemas given. */
function workflow(plan: z.ZodType, answer: z.ZodType, applyKind: "compute" | "agent" = "compute") {
  return compileWorkflow(
    defineWorkflow({
      name: "w",
      startAt: "plan",
      nodes: {
        plan: agent({ prompt: "Plan", output: plan }),
        ok: checkpoint({ prompt: "OK?", answer }),
        apply:
          applyKind === "compute"
            ? compute({ run: () => 1 })
            : agent({ prompt: "Apply", output: z.string() }),
      },
      edges: { plan: { to: "ok" }, ok: { to: "apply" }, apply: { to: "done" } },
    }),
  );
}

const visit = (
  path: string,
  nodeKind: SavedVisit["nodeKind"],
  output: unknown,
  nextPath: string | null,
): SavedVisit => ({
  path,
  visit: 1,
  nodeKind,
  attempt: 1,
  status: "succeeded",
  output: output as never,
  nextPath,
});

/** A continuation after `ok` was answered, whose parent saved plan's output; apply is open. */
const snapshot: RunSnapshot = {
  runId: "w-1",
  input: null,
  visits: [{ ...visit("apply", "compute", undefined, null), status: "running" }],
  carriedOutputs: { plan: { steps: ["a"] } },
  accepted: { path: "ok", visit: 1, answer: { approved: true } },
  stepCount: 1,
};

describe("whether a saved run fits a changed workflow", () => {
  it("accepts a change that keeps the saved nodes and their schemas", () => {
    const same = workflow(z.object({ steps: z.array(z.string()) }), z.object({ approved: z.boolean() }));
    expect(resumeProblem(same, snapshot)).toBeNull();
  });

  it("refuses a changed output or answer schema that the saved values no longer match, naming no value", () => {
    const output = workflow(z.object({ steps: z.array(z.number()) }), z.object({ approved: z.boolean() }));
    expect(resumeProblem(output, snapshot)).toBe(
      "the saved output of plan does not match its changed schema: steps[0]: expected number",
    );
    const answer = workflow(
      z.object({ steps: z.array(z.string()) }),
      z.object({ approved: z.literal(false) }),
    );
    expect(resumeProblem(answer, snapshot)).toMatch(
      /^the saved answer of ok does not match its changed schema: approved/,
    );
    expect(resumeProblem(answer, snapshot)).not.toContain("true");
  });

  it("refuses a saved node whose kind changed", () => {
    const kind = workflow(
      z.object({ steps: z.array(z.string()) }),
      z.object({ approved: z.boolean() }),
      "agent",
    );
    expect(resumeProblem(kind, snapshot)).toBe(
      "apply is now an agent node; the run saved a compute node there",
    );
  });
});
