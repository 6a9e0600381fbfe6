import type { Fence } from "@piw/protocol";
import { describe, expectTypeOf, it } from "vitest";
import type { RunStore } from "../src/index.js";

declare const store: RunStore;
declare const fence: Fence;

describe("RunStore operations take their typed requests", () => {
  it("refuses a claim with wrong field types", () => {
    // @ts-expect-error a run ID is a string and a lease a number of milliseconds
    store.claimRun({ runId: 42, leaseMs: "soon" });
    store.claimRun({ runId: "demo-1", claimToken: "claim-1", leaseMs: 30_000 });
  });

  it("refuses a node visit of an unknown kind and a finish without its result", () => {
    // @ts-expect-error `robot` is no node kind
    store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "robot" });
    // @ts-expect-error a finish carries its result
    store.finishNodeVisit(fence, { path: "plan", visit: 1 });
  });

  it("returns the typed record of an enqueued message", () => {
    const enqueued = store.enqueueMessage(fence, {
      messageId: "msg:demo-1:plan:1:step_prompt",
      kind: "step_prompt",
      path: "plan",
      visit: 1,
      body: "Plan it.",
      triggerTurn: true,
    });
    if (enqueued.kind === "applied") expectTypeOf(enqueued.value.messageId).toEqualTypeOf<string>();
  });
});
