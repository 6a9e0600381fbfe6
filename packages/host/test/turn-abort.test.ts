import type { Fence } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildRunView } from "../src/build-run-view.js";
import { runningRun, type StoreFile, saved, storeFile } from "./store-file.js";

const RUN = "abort-1";
const SESSION = "session-1";
const noWorkers = { acceptedWorker: () => undefined };

let file: StoreFile;
let store: RunStore;
beforeEach(() => {
  file = storeFile("piw-abort-");
  store = file.store;
});
afterEach(() => file.cleanup());

/** A running run of a Pi session whose agent step's prompt started a turn the host accepted. */
function openStepTurn(timeoutMs = 60_000): { fence: Fence; requestId: string } {
  const fence = runningRun(store, RUN, { workflowName: "abort", origin: { kind: "pi", sessionId: SESSION } });
  saved(store.startNodeVisit(fence, { path: "work", visit: 1, nodeKind: "agent", timeoutMs }));
  const messageId = `msg:${RUN}:work:1:step_prompt`;
  saved(
    store.enqueueMessage(fence, {
      messageId,
      kind: "step_prompt",
      path: "work",
      visit: 1,
      body: "Do the work.",
      triggerTurn: true,
    }),
  );
  saved(store.claimMessages({ sessionId: SESSION, claimToken: "deliverer", leaseMs: 10_000 }));
  saved(store.markMessageDelivered({ messageId }));
  const requestId = "req-1";
  const owned = saved(store.startTurn({ sessionId: SESSION, requestId, messageId })) as { owner: string };
  expect(owned.owner).toBe("workflow");
  return { fence, requestId };
}

function view() {
  const built = buildRunView(store, RUN, noWorkers);
  if (!built) throw new Error("no view");
  return built;
}

describe("the host's decision to abort a step's Pi turn", () => {
  it("is absent while the step is open and its run is running, and names the deadline once it passed", () => {
    const { fence, requestId } = openStepTurn(60_000);
    expect(view().abortTurn).toBeNull();
    // The running step's view carries its saved deadline, for the time left in status lines.
    const deadlineAt = store.listRunSteps(RUN)[0]?.deadlineAt;
    expect(deadlineAt).toBeGreaterThan(Date.now());
    expect(view().nodes).toMatchObject([{ path: "work", state: "running", deadlineAt }]);
    saved(
      store.finishNodeVisit(fence, {
        path: "work",
        visit: 1,
        result: {
          status: "timed_out",
          error: { code: "node_timed_out", message: "Step work timed out after 60000 ms." },
        },
      }),
    );
    expect(view().abortTurn).toEqual({
      turnId: expect.any(String),
      requestId,
      reason: "Step work timed out after 60000 ms.",
    });
  });

  it("asks to abort the turn of a cancelled run, and of a paused one", () => {
    const { requestId } = openStepTurn();
    saved(store.requestPause({ runId: RUN }));
    expect(view().abortTurn).toMatchObject({ requestId, reason: `Run ${RUN} was paused during step work.` });
    saved(store.cancelRun({ runId: RUN }));
    expect(view().abortTurn).toMatchObject({
      requestId,
      reason: `Run ${RUN} was cancelled; step work is over.`,
    });
  });

  it("asks to abort the turn of a step whose parallel branch its join cancelled", () => {
    const { fence, requestId } = openStepTurn();
    const error = {
      code: "cancelled" as const,
      message: "Branch b of fan was cancelled: its join was decided without it.",
    };
    saved(store.finishNodeVisit(fence, { path: "work", visit: 1, result: { status: "failed", error } }));
    expect(view().abortTurn).toMatchObject({
      requestId,
      reason: "Step work was cancelled: its parallel branch is no longer needed.",
    });
  });

  it("leaves the turn alone when its step took its output and when the run then completed", () => {
    const { fence } = openStepTurn();
    saved(
      store.finishNodeVisit(fence, {
        path: "work",
        visit: 1,
        result: { status: "succeeded", output: { done: true }, next: null },
      }),
    );
    // The model was told to end its turn itself; stopping it would cut its closing reply.
    expect(view().abortTurn).toBeNull();
    saved(store.finishRun(fence, { outcome: "completed", output: { done: true } }));
    expect(view().abortTurn).toBeNull();
  });

  it("stops asking once the turn has ended", () => {
    const { requestId } = openStepTurn();
    saved(store.requestPause({ runId: RUN }));
    expect(view().abortTurn).not.toBeNull();
    saved(store.endTurn({ sessionId: SESSION, requestId, reason: "aborted" }));
    expect(view().abortTurn).toBeNull();
  });
});
