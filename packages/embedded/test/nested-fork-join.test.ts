import {
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  parallel,
  wait,
  type WorkflowDefinition,
} from "@piw/engine";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, openRuntime } from "./harness.js";

/**
 * A parallel node nested in a branch rests (its branches wait on the clock, or drain for a pause)
 * when the outer join is decided without it: the nested node's own visit must be saved as cancelled,
 * not left open, and the run goes on past the outer join.
 */

const source = { kind: "builtin" as const, id: "nested-fork-join", revision: "1" };
let h: Harness;
afterEach(() => h?.cleanup());

/**
 * Outer `fan` joins `any`: `quick` succeeds once `rests()` says the nested branch rests (then one
 * more timer turn, for its park to reach the outer fork); `deep` is a parallel node over `inner`.
 */
function nestedWorkflow(inner: WorkflowDefinition, rests: () => boolean) {
  const quick = action({
    run: async () => {
      for (let i = 0; i < 500 && !rests(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      if (!rests()) throw new Error("the nested branch never came to rest");
      await new Promise((resolve) => setTimeout(resolve, 20));
      return "quick";
    },
  });
  return compileWorkflow(
    defineWorkflow({
      name: "nested",
      startAt: "fan",
      nodes: {
        fan: parallel({
          branches: { quick, deep: parallel({ branches: { x: inner }, join: "all" }) },
          join: "any",
        }),
        after: compute({ run: ({ outputs }) => outputs.fan }),
      },
      edges: { fan: { to: "after" }, after: { to: "done" } },
    } as never) as WorkflowDefinition,
  );
}

function stepsOf(runId: string) {
  return new Map(h.store.listRunSteps(runId).map((s) => [s.path, s]));
}

describe("a nested parallel node whose outer join is decided while it rests", () => {
  it("is saved cancelled when its branch waits on the clock, and the run completes", async () => {
    h = openRuntime();
    const inner = defineWorkflow({
      name: "inner",
      startAt: "hold",
      nodes: { hold: wait({ ms: 3_600_000 }) },
      edges: { hold: { to: "done" } },
    } as never) as WorkflowDefinition;
    let runId = "";
    // Resting: its wait's visit is open (it then parks on the clock through the outer fork).
    const wf = nestedWorkflow(inner, () => stepsOf(runId).get("fan/deep/deep/x/hold")?.status === "running");
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const outcome = await h.runtime.execute(h.runtime.activate(runId), wf);

    expect(outcome).toMatchObject({ kind: "completed", output: { quick: "quick" } });
    const steps = stepsOf(runId);
    expect([...steps.values()].filter((s) => s.status === "running")).toEqual([]);
    expect(steps.get("fan/deep/deep")).toMatchObject({ status: "failed", errorCode: "cancelled" });
    expect(steps.get("fan/deep/deep/x/hold")).toMatchObject({ status: "failed", errorCode: "cancelled" });
    expect(h.store.getRun(runId)).toMatchObject({ status: "done" });
  });

  it("is saved cancelled when a pause drains it and the outer join is then decided, and the run completes on resume", async () => {
    h = openRuntime();
    let runId = "";
    const inner = defineWorkflow({
      name: "inner",
      startAt: "x1",
      nodes: {
        x1: compute({
          run: () => {
            expect(h.store.requestPause({ runId }).kind).toBe("applied");
            return 1;
          },
        }),
        x2: compute({ run: () => 2 }),
      },
      edges: { x1: { to: "x2" }, x2: { to: "done" } },
    } as never) as WorkflowDefinition;
    // The pause comes in x1 while `quick` runs: the nested branch stops at its next boundary and
    // rests; `quick` finishes its visit, which decides the outer join before the run parks.
    const wf = nestedWorkflow(inner, () => stepsOf(runId).get("fan/deep/deep/x/x1")?.status === "succeeded");
    runId = h.runtime.reserve({ workflow: wf, source, input: null });
    // The pause still holds at the outer node's boundary: the run parks there, and a resume goes on.
    expect(await h.runtime.execute(h.runtime.activate(runId), wf)).toEqual({
      kind: "parked",
      reason: "paused",
    });
    expect(stepsOf(runId).get("fan/deep/deep")).toMatchObject({ status: "failed", errorCode: "cancelled" });
    const outcome = await h.runtime.execute(h.runtime.activate(runId, { resume: true }), wf);

    expect(outcome).toMatchObject({ kind: "completed", output: { quick: "quick" } });
    const steps = stepsOf(runId);
    expect([...steps.values()].filter((s) => s.status === "running")).toEqual([]);
    expect(steps.get("fan/deep/deep")).toMatchObject({ status: "failed", errorCode: "cancelled" });
    expect(steps.get("fan/deep/deep/x/x1")).toMatchObject({ status: "succeeded" });
    expect(steps.has("fan/deep/deep/x/x2")).toBe(false);
  });
});
