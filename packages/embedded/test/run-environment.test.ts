import { compileWorkflow, defineWorkflow, shell } from "@piw/engine";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, openRuntime } from "./harness.js";

let h: Harness;
afterEach(() => h.cleanup());

const source = { kind: "builtin" as const, id: "test", revision: "1" };

const probe = compileWorkflow(
  defineWorkflow({
    name: "probe",
    startAt: "look",
    nodes: {
      look: shell({
        exec: ["sh", "-c", 'printf "%s|%s" "$PIW_TEST_TOKEN" "$EXTRA"'],
        env: { EXTRA: "added" },
        parse: ({ stdout }) => stdout,
      }),
    },
    edges: { look: { to: "done" } },
  }),
);

describe("the embedded runtime's environment", () => {
  it("runs shell nodes in the environment given with the run, saved with it, and a node's env adds to it", async () => {
    h = openRuntime();
    const { runId, outcome } = await h.runtime.run({
      workflow: probe,
      source,
      input: null,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PIW_TEST_TOKEN: "given-to-the-run" },
    });
    expect(outcome.kind).toBe("completed");
    expect(h.store.readRunFinalOutput(runId)).toBe("given-to-the-run|added");
    expect(h.store.readRunEnv(runId)).toMatchObject({ PIW_TEST_TOKEN: "given-to-the-run" });
  });

  it("keeps this process's environment when the run has none", async () => {
    h = openRuntime();
    const { runId } = await h.runtime.run({ workflow: probe, source, input: null });
    expect(h.store.readRunFinalOutput(runId)).toBe(`${process.env.PIW_TEST_TOKEN ?? ""}|added`);
    expect(h.store.readRunEnv(runId)).toBeNull();
  });
});
