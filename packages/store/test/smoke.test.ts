import { afterEach, describe, expect, it } from "vitest";
import { flatRun, openHarness, runningRun, type StoreHarness, saved } from "./fixtures.js";

let h: StoreHarness;
afterEach(() => h.cleanup());

describe("a run from reservation to completion", () => {
  it("walks queued -> starting -> running -> done and saves typed facts", () => {
    h = openHarness();
    const fence = runningRun(h.store, "demo-1");
    const visit = saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    expect(visit).toMatchObject({ status: "running", attempt: 1 });
    saved(
      h.store.finishNodeVisit(fence, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: { x: 1 }, next: null },
      }),
    );
    const done = h.store.finishRun(fence, { outcome: "completed", output: { answer: 42 } });
    expect(done.kind).toBe("applied");
    expect(flatRun(h.store.getRun("demo-1"))).toMatchObject({
      status: "done",
      outcome: "completed",
      claimed: false,
    });
    expect(h.store.readRunFinalOutput("demo-1")).toEqual({ answer: 42 });
    const facts = h.store.readTerminalFacts("demo-1");
    expect(facts).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "completed", output: { answer: 42 } } },
    });
    const messages = saved(h.store.createTerminalMessages({ runId: "demo-1" }));
    expect(messages.map((m) => m.messageId)).toEqual(["msg:demo-1:terminal"]);
  });
});
