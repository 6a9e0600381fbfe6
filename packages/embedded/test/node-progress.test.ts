import { compileWorkflow, compute, defineWorkflow } from "@piw/engine";
import type { NodeProgressRecord } from "@piw/store";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, openRuntime } from "./harness.js";

let h: Harness;
afterEach(() => h.cleanup());

const source = { kind: "builtin" as const, id: "test", revision: "1" };

describe("ctx.progress in the embedded runtime", () => {
  it("saves the visit's progress in the store while it runs and drops it when it finishes", async () => {
    h = openRuntime();
    let seen: NodeProgressRecord[] = [];
    const wf = compileWorkflow(
      defineWorkflow({
        name: "embedded-progress",
        startAt: "work",
        nodes: {
          work: compute({
            run: (ctx) => {
              ctx.progress({ done: 1, total: 2, message: "half" });
              // The first update is sent at once: the store has it while the visit still runs.
              seen = h.store.listNodeProgress(runId);
              return "ok";
            },
          }),
        },
        edges: { work: { to: "done" } },
      }),
    );
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    expect(await h.runtime.execute(h.runtime.activate(runId), wf)).toEqual({
      kind: "completed",
      output: "ok",
    });
    expect(seen.map((r) => [r.path, r.visit, r.attempt, r.state])).toEqual([
      ["work", 1, 1, { done: 1, total: 2, message: "half" }],
    ]);
    expect(h.store.listNodeProgress(runId)).toEqual([]);
  });
});
