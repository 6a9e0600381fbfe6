import { describe, expect, it } from "vitest";
import {
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
  parallel,
  type WorkflowDefinition,
} from "../src/index.js";
import { boundedFork, started, visitStatus } from "./memory-run.js";

/** A run that fails inside a branch, with a failure that ends the run, closes the fork's visit too. */
describe("parallel: a run failure inside a branch", () => {
  it("closes the fork's visit with maxSteps' error when a branch exceeds it", async () => {
    const wf = boundedFork();
    const port = started(new MemoryRunPort());
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "max_steps_exceeded" } });
    expect(visitStatus(port, "fan")).toEqual({ status: "failed", code: "max_steps_exceeded" });
    const fan = port.visits.find((v) => v.path === "fan");
    expect(outcome.kind === "failed" && fan?.error?.message).toBe(
      outcome.kind === "failed" && outcome.error.message,
    );
    expect(port.visits.filter((v) => v.status === "running")).toEqual([]);
  });

  it("closes both forks' visits when a branch of a nested fork exceeds maxSteps", async () => {
    const inner = parallel({
      branches: { x: compute({ run: () => 1 }), y: compute({ run: () => 2 }) },
      join: "all",
      concurrency: 1,
    });
    const wf = compileWorkflow(
      defineWorkflow({
        name: "nested",
        maxSteps: 3,
        startAt: "fan",
        nodes: { fan: parallel({ branches: { inner }, join: "all" }) },
        edges: { fan: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    expect(await executeRun({ workflow: wf, port })).toMatchObject({
      kind: "failed",
      error: { code: "max_steps_exceeded" },
    });
    expect(visitStatus(port, "fan")).toEqual({ status: "failed", code: "max_steps_exceeded" });
    expect(visitStatus(port, "fan/inner/inner")).toEqual({ status: "failed", code: "max_steps_exceeded" });
    expect(port.visits.filter((v) => v.status === "running")).toEqual([]);
  });

  it.each([
    ["saved next node", true],
    ["open visit's node", false],
  ])("closes the fork's visit with source_changed when a branch's %s is gone", async (_what, forget) => {
    const shaped = (second: "check" | "verify"): WorkflowDefinition => {
      const branch = defineWorkflow({
        name: "steps",
        startAt: "first",
        nodes: {
          first: compute({ run: () => 1 }),
          [second]: action({ run: () => new Promise(() => {}) }),
        },
        edges: { first: { to: second }, [second]: { to: "done" } },
      } as never);
      return defineWorkflow({
        name: "changing",
        startAt: "fan",
        nodes: { fan: parallel({ branches: { steps: branch }, join: "all" }) },
        edges: { fan: { to: "done" } },
      }) as WorkflowDefinition;
    };
    // The first worker saves `first` (its next node: check) and dies while check runs.
    const first = started(new MemoryRunPort());
    const running = executeRun({ workflow: compileWorkflow(shaped("check")), port: first });
    await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 100))]);
    expect(visitStatus(first, "fan/steps/first")).toEqual({ status: "succeeded", code: null });
    // The workflow changed under the run: the branch's next node is no longer in it.
    const second = started(first.reopen());
    if (forget)
      second.visits.splice(
        second.visits.findIndex((v) => v.path === "fan/steps/check"),
        1,
      );
    const outcome = await executeRun({ workflow: compileWorkflow(shaped("verify")), port: second });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "source_changed" } });
    expect(visitStatus(second, "fan")).toEqual({ status: "failed", code: "source_changed" });
    expect(second.visits.filter((v) => v.status === "running").map((v) => v.path)).toEqual(
      forget ? [] : ["fan/steps/check"],
    );
  });

  it("closes the fork's visit when a branch's timeoutMs function throws as its visit opens", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "deadline",
        startAt: "fan",
        nodes: {
          fan: parallel({
            branches: {
              late: action({
                timeoutMs: () => {
                  throw new Error("no deadline today");
                },
                run: () => 1,
              }),
            },
            join: "all",
          }),
        },
        edges: { fan: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    expect(await executeRun({ workflow: wf, port })).toMatchObject({
      kind: "failed",
      error: { code: "node_failed", message: "The timeoutMs function of fan/late/late threw." },
    });
    expect(visitStatus(port, "fan")).toEqual({ status: "failed", code: "node_failed" });
    expect(port.visits.filter((v) => v.status === "running")).toEqual([]);
  });
});
