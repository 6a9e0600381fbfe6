import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CompileError,
  checkpoint,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
} from "../src/index.js";

function gate(answeredBy?: unknown) {
  return defineWorkflow({
    name: "gate",
    startAt: "approve",
    nodes: {
      approve: checkpoint({
        prompt: "Ship it?",
        answer: z.object({ ship: z.boolean() }),
        ...(answeredBy === undefined ? {} : { answeredBy: answeredBy as "human" }),
      }),
    },
    edges: { approve: { to: "done" } },
  });
}

describe("who may answer a checkpoint", () => {
  it.each([
    [undefined, "human"],
    ["human", "human"],
    ["model", "model"],
    ["either", "either"],
  ])("compiles answeredBy %s into the node and the manifest as %s", (given, expected) => {
    const compiled = compileWorkflow(gate(given));
    expect(compiled.nodes.get("approve")).toMatchObject({ answeredBy: expected });
    expect(compiled.manifest.nodes).toEqual([
      {
        path: "approve",
        name: "approve",
        scope: "",
        kind: "checkpoint",
        title: "approve",
        answeredBy: expected,
      },
    ]);
  });

  it("refuses any other answeredBy at compile time", () => {
    expect(() => compileWorkflow(gate("anyone"))).toThrow(CompileError);
    expect(() => compileWorkflow(gate("anyone"))).toThrow(
      'approve: answeredBy must be "human", "model" or "either"',
    );
  });

  it("keeps the digest apart: who may answer is part of the definition", () => {
    expect(compileWorkflow(gate("model")).digest).not.toBe(compileWorkflow(gate()).digest);
  });

  it("saves who may answer and the answer's JSON Schema with the waiting run", async () => {
    const port = new MemoryRunPort({ runId: "run-g" });
    port.status = "running";
    expect(await executeRun({ workflow: compileWorkflow(gate("either")), port })).toMatchObject({
      kind: "waiting",
    });
    expect(port.ending).toMatchObject({
      outcome: "waiting",
      checkpoint: {
        path: "approve",
        visit: 1,
        prompt: "Ship it?",
        answeredBy: "either",
        answerSchema: { type: "object", properties: { ship: { type: "boolean" } }, required: ["ship"] },
      },
    });
  });
});
