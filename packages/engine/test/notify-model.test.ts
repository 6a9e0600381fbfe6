import { describe, expect, it } from "vitest";
import {
  CompileError,
  compileWorkflow,
  compute,
  defineWorkflow,
  type WorkflowDefinition,
} from "../src/index.js";

const base = {
  name: "w",
  startAt: "a",
  nodes: { a: compute({ run: () => 1 }) },
  edges: { a: { to: "done" } },
} as const;

function unchecked(spec: Record<string, unknown>): WorkflowDefinition<string, undefined> {
  return defineWorkflow({ ...base, ...spec } as never);
}

describe("notifyModel", () => {
  it("defaults both notices on, and keeps what the workflow turns off", () => {
    expect(compileWorkflow(defineWorkflow(base)).notifyModel).toEqual({ onFailure: true, onCancel: true });
    expect(
      compileWorkflow(defineWorkflow({ ...base, notifyModel: { onCancel: false } })).notifyModel,
    ).toEqual({
      onFailure: true,
      onCancel: false,
    });
  });

  it("leaves the digest of a workflow without it as it was, and changes it when set", () => {
    const plain = compileWorkflow(defineWorkflow(base)).digest;
    expect(compileWorkflow(defineWorkflow({ ...base, notifyModel: { onFailure: false } })).digest).not.toBe(
      plain,
    );
    expect(compileWorkflow(defineWorkflow(base)).digest).toBe(plain);
  });

  it("refuses a value that is not an object of booleans, naming the wrong fields", () => {
    for (const [notifyModel, wrong] of [
      [true, undefined],
      [{ onFailure: "yes" }, "onFailure"],
      [{ onFail: false }, "onFail"],
    ] as const) {
      let problems: readonly { path: string; message: string }[] = [];
      try {
        compileWorkflow(unchecked({ notifyModel }));
      } catch (error) {
        expect(error).toBeInstanceOf(CompileError);
        problems = (error as CompileError).problems;
      }
      expect(problems).toHaveLength(1);
      expect(problems[0]?.path).toBe(":notifyModel");
      expect(problems[0]?.message).toContain(
        "notifyModel must be an object { onFailure?: boolean, onCancel?: boolean }",
      );
      if (wrong !== undefined) expect(problems[0]?.message).toContain(`check ${wrong}`);
    }
  });
});
