import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ApprovalMode,
  type ApprovalOutput,
  approval,
  approvalChoice,
  CompileError,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
  type NodeContext,
} from "../src/index.js";
import { started } from "./memory-run.js";

// The approval gate block: typed choices, who may answer, and the modes that pass it without a person.

type Input = { approval: ApprovalMode };

function gated(deadlineMs?: number) {
  return compileWorkflow(
    defineWorkflow({
      name: "gated",
      input: z.object({ approval: z.enum(["required", "auto", "skip"]) }),
      startAt: "gate",
      nodes: {
        gate: approval({
          prompt: "Ship the plan?",
          approval: ({ input }: NodeContext<Input>) => input.approval,
          ...(deadlineMs === undefined ? {} : { deadlineMs }),
        }),
        ship: compute({ run: ({ outputs }) => ({ shipped: outputs.gate }) }),
        halt: compute({ run: ({ outputs }) => ({ halted: outputs.gate }) }),
      },
      edges: {
        gate: {
          to: ["ship", "halt"],
          route: (out) => (["continue", "skipped"].includes(approvalChoice(out)) ? "ship" : "halt"),
        },
        ship: { to: "done" },
        halt: { to: "done" },
      },
    }),
  );
}

function gateNode(wf: ReturnType<typeof gated>) {
  const node = wf.nodes.get("gate");
  if (node?.kind !== "checkpoint") throw new Error("no gate");
  return node;
}

describe("approval()", () => {
  it("compiles its choices into a typed answer only a person gives", () => {
    const node = gateNode(gated());
    expect(node.answeredBy).toBe("human");
    expect(node.answerCheck.kind).toBe("json_schema");
    const ok = (answer: unknown) => node.answer.safeParse(answer).success;
    expect(ok({ choice: "continue" })).toBe(true);
    expect(ok({ choice: "stop" })).toBe(true);
    expect(ok({ choice: "revise", note: "split step 2" })).toBe(true);
    // Refused: an unknown choice, a revision without its note, and a person posing as the clock.
    expect(ok({ choice: "maybe" })).toBe(false);
    expect(ok({ choice: "revise" })).toBe(false);
    expect(ok({ choice: "continue", automatic: "deadline" })).toBe(false);
    // The output type is a union the route narrows; a skipped gate has no choice.
    const outputs: ApprovalOutput[] = [
      { choice: "revise", note: "x" },
      { choice: "continue", automatic: "deadline" },
      { skipped: true },
    ];
    expect(outputs.map(approvalChoice)).toEqual(["revise", "continue", "skipped"]);
  });

  it("takes an author's own choices and default", () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "own",
        startAt: "gate",
        nodes: {
          gate: approval({
            prompt: "Which?",
            choices: ["ship", "hold", "rework"],
            noteRequired: ["rework"],
            default: "hold",
            approval: "auto",
          }),
        },
        edges: { gate: { to: "done" } },
      }),
    );
    const node = gateNode(wf);
    expect(node.answer.safeParse({ choice: "rework" }).success).toBe(false);
    expect(node.answer.safeParse({ choice: "ship" }).success).toBe(true);
    expect(node.gate).toMatchObject({ defaultChoice: "hold", deadlineMs: null });
  });

  it("refuses a default that needs a note, and a deadline shorter than a second, at compile time", () => {
    const build = (options: { default?: "revise"; deadlineMs?: number }) =>
      compileWorkflow(
        defineWorkflow({
          name: "bad",
          startAt: "gate",
          nodes: { gate: approval({ prompt: "?", ...options }) },
          edges: { gate: { to: "done" } },
        }),
      );
    expect(() => build({ default: "revise" })).toThrow(CompileError);
    expect(() => build({ deadlineMs: 10 })).toThrow(CompileError);
  });

  it("required: waits for a person, saving its deadline and the default the host takes then", async () => {
    const wf = gated(60_000);
    const port = started(new MemoryRunPort({ input: { approval: "required" } }));
    const before = Date.now();
    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "waiting", path: "gate", visit: 1 });
    expect(port.ending).toMatchObject({
      outcome: "waiting",
      checkpoint: { path: "gate", answeredBy: "human" },
      timeout: { answer: { choice: "continue", automatic: "deadline" } },
    });
    const at = port.ending?.outcome === "waiting" ? (port.ending.timeout?.at ?? 0) : 0;
    expect(at).toBeGreaterThanOrEqual(before + 60_000);
  });

  it("auto: takes the default at once, recorded as automatic, with no wait", async () => {
    const port = started(new MemoryRunPort({ input: { approval: "auto" } }));
    expect(await executeRun({ workflow: gated(), port })).toEqual({
      kind: "completed",
      output: { shipped: { choice: "continue", automatic: "auto" } },
    });
  });

  it("skip: passes the gate with no choice recorded", async () => {
    const port = started(new MemoryRunPort({ input: { approval: "skip" } }));
    expect(await executeRun({ workflow: gated(), port })).toEqual({
      kind: "completed",
      output: { shipped: { skipped: true } },
    });
  });

  it("a continuation takes the deadline's default, and refuses an automatic answer that is not it", async () => {
    const wf = gated(60_000);
    const accepted = (answer: unknown) =>
      started(
        new MemoryRunPort({
          input: { approval: "required" },
          accepted: { path: "gate", visit: 1, answer: answer as never },
        }),
      );
    expect(
      await executeRun({ workflow: wf, port: accepted({ choice: "continue", automatic: "deadline" }) }),
    ).toEqual({ kind: "completed", output: { shipped: { choice: "continue", automatic: "deadline" } } });
    expect(await executeRun({ workflow: wf, port: accepted({ choice: "stop", note: "not now" }) })).toEqual({
      kind: "completed",
      output: { halted: { choice: "stop", note: "not now" } },
    });
    const forged = await executeRun({
      workflow: wf,
      port: accepted({ choice: "stop", automatic: "deadline" }),
    });
    expect(forged).toMatchObject({ kind: "failed", error: { code: "answer_invalid" } });
  });
});
