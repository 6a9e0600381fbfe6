import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LaunchRefused, prepareLaunch } from "../src/index.js";
import { inputKeysOf } from "../src/launch/input-keys.js";

const repo = resolve(import.meta.dirname, "../../..");
const example = (name: string) => join(repo, "examples", `${name}.workflow.ts`);

async function refusal(request: Parameters<typeof prepareLaunch>[0]): Promise<LaunchRefused> {
  const error = await prepareLaunch(request).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof LaunchRefused)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe("input keys the workflow's schema does not have", () => {
  it("are refused with the keys it has, for task words and for a misspelled key", async () => {
    const words = await refusal({ ref: example("approval"), cwd: repo, task: "bump zod" });
    expect(words.code).toBe("input_invalid");
    expect(words.usage).toBe(true);
    expect(words.message).toBe(
      "workflow approval takes no task words; its input keys are: change (required)",
    );

    const typo = await refusal({ ref: example("hello"), cwd: repo, input: { tsak: "hi" } });
    expect(typo.message).toBe(`workflow hello's input has no "tsak"; its input keys are: task (required)`);
  });

  it("let a known input through unchanged", async () => {
    const prepared = await prepareLaunch({ ref: example("hello"), cwd: repo, task: "hi" });
    expect(prepared.input).toEqual({ task: "hi" });
    expect(prepared.notes).toEqual([]);
  });

  it("are only named for plain objects: strict and loose objects and other schemas decide for themselves", () => {
    expect(
      inputKeysOf(z.object({ a: z.string(), b: z.number().optional(), c: z.string().default("x") })),
    ).toEqual({
      keys: ["a", "b", "c"],
      required: ["a"],
    });
    expect(inputKeysOf(z.strictObject({ a: z.string() }))).toBeUndefined();
    expect(inputKeysOf(z.looseObject({ a: z.string() }))).toBeUndefined();
    expect(inputKeysOf(z.string())).toBeUndefined();
  });
});
