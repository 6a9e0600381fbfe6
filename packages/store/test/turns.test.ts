import { createHash } from "node:crypto";
import { clientMethods, endTurnSchema, type Fence, startTurnSchema } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  crashAndRelaunch,
  expectRefusedBySchema,
  openHarness,
  runningRun,
  runSnapshot,
  type StoreHarness,
  saved,
} from "./fixtures.js";

/** Turn IDs are a hash of (session, request), so no choice of IDs can collide. */
const TURN_1 = `turn:${createHash("sha256")
  .update(JSON.stringify(["session-1", "req-1"]))
  .digest("hex")
  .slice(0, 32)}`;

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUN = "turns-1";
const SESSION = "session-1";

function promptId(runId: string, path: string, visit: number, n = 1): string {
  return `msg:${runId}:${path}:${visit}:step_prompt${n === 1 ? "" : `:${n}`}`;
}

/** Open a node visit and deliver its step prompt to the session, as the host and extension do. */
function deliverPrompt(fence: Fence, path = "implement", visit = 1, n = 1): string {
  if (n === 1) saved(h.store.startNodeVisit(fence, { path, visit, nodeKind: "agent" }));
  const messageId = promptId(fence.runId, path, visit, n);
  saved(
    h.store.enqueueMessage(fence, {
      messageId,
      kind: "step_prompt",
      path,
      visit,
      body: `Do step ${path} (${n}).`,
      triggerTurn: true,
    }),
  );
  const run = h.store.getRun(fence.runId);
  const session = run?.origin.kind === "pi" ? run.origin.sessionId : "";
  const claimed = saved(
    h.store.claimMessages({ sessionId: session, claimToken: "deliverer", leaseMs: 10_000 }),
  );
  expect(claimed.map((m) => m.messageId)).toContain(messageId);
  saved(h.store.markMessageDelivered({ messageId }));
  return messageId;
}

function lastEvent(runId: string) {
  return h.store.listRunEvents(runId).at(-1);
}

function workflowTurn(requestId: string, messageId: string, path = "implement", visit = 1) {
  return {
    owner: "workflow",
    turn: {
      turnId: expect.stringMatching(/^turn:[0-9a-f]{32}$/),
      runId: RUN,
      path,
      visit,
      sessionId: SESSION,
      requestId,
      messageId,
      status: "open",
      endReason: null,
    },
  };
}

function noOwner(sessionId: string, requestId: string, messageId: string) {
  return {
    owner: "none",
    turn: {
      turnId: expect.stringMatching(/^turn:[0-9a-f]{32}$/),
      runId: null,
      path: null,
      visit: null,
      sessionId,
      requestId,
      messageId,
      status: "unowned",
      endReason: null,
    },
  };
}

describe("startTurn", () => {
  it("gives a delivered step prompt of the open visit to the workflow", () => {
    const fence = runningRun(h.store, RUN);
    const messageId = deliverPrompt(fence);
    const before = runSnapshot(h.store, RUN);

    const started = h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId });

    expect(started).toEqual({ kind: "applied", value: workflowTurn("req-1", messageId) });
    const run = h.store.getRun(RUN);
    expect(run?.revision).toBe(before.revision + 1);
    expect(run?.progressRevision).toBe(before.progressRevision);
    expect(lastEvent(RUN)).toMatchObject({
      type: "turn.started",
      path: "implement",
      visit: 1,
      data: { turnId: TURN_1 },
    });
  });

  it("adopts a repeated report of the same request and changes nothing", () => {
    const fence = runningRun(h.store, RUN);
    const messageId = deliverPrompt(fence);
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId })).toEqual({
      kind: "adopted",
      value: workflowTurn("req-1", messageId),
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses the same request ID with another message as request_mismatch, changing nothing", () => {
    const fence = runningRun(h.store, RUN);
    const messageId = deliverPrompt(fence);
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId }));
    const before = runSnapshot(h.store, RUN);

    for (const other of ["user-message-7", promptId(RUN, "implement", 1, 2)]) {
      expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: other })).toEqual({
        kind: "conflict",
        evidence: { kind: "request_mismatch", resource: "turn", id: TURN_1 },
      });
    }
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    // The saved answer is unchanged.
    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId })).toMatchObject({
      kind: "adopted",
      value: { owner: "workflow" },
    });
  });

  it("gives a step prompt that is still pending or claimed to the workflow too", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.startNodeVisit(fence, { path: "implement", visit: 1, nodeKind: "agent" }));
    const messageId = promptId(RUN, "implement", 1);
    saved(
      h.store.enqueueMessage(fence, {
        messageId,
        kind: "step_prompt",
        path: "implement",
        visit: 1,
        body: "Do it.",
        triggerTurn: true,
      }),
    );
    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId })).toMatchObject({
      kind: "applied",
      value: { owner: "workflow", turn: { status: "open" } },
    });
  });

  describe("a turn no workflow owns", () => {
    const cases: Array<[string, () => { sessionId: string; messageId: string }]> = [
      [
        "a step prompt of a run that completed",
        () => {
          const fence = runningRun(h.store, RUN);
          const messageId = deliverPrompt(fence);
          saved(h.store.finishRun(fence, { outcome: "completed", output: null }));
          return { sessionId: SESSION, messageId };
        },
      ],
      [
        "a step prompt of a run that was cancelled",
        () => {
          const fence = runningRun(h.store, RUN);
          const messageId = deliverPrompt(fence);
          saved(h.store.cancelRun({ runId: RUN }));
          return { sessionId: SESSION, messageId };
        },
      ],
      [
        "a step prompt of a parked run",
        () => {
          const fence = runningRun(h.store, RUN);
          const messageId = deliverPrompt(fence);
          saved(h.store.parkRun(fence, { code: "paused", message: "Paused." }));
          return { sessionId: SESSION, messageId };
        },
      ],
      [
        "a step prompt proposed by another session",
        () => {
          const fence = runningRun(h.store, RUN);
          return { sessionId: "session-2", messageId: deliverPrompt(fence) };
        },
      ],
      [
        "an unknown message ID",
        () => {
          runningRun(h.store, RUN);
          return { sessionId: SESSION, messageId: "msg:nobody:ever:1:step_prompt" };
        },
      ],
      [
        "a plain user message",
        () => {
          const fence = runningRun(h.store, RUN);
          deliverPrompt(fence);
          return { sessionId: SESSION, messageId: "pi-user-entry-42" };
        },
      ],
      [
        "a notification message",
        () => {
          const fence = runningRun(h.store, RUN);
          saved(h.store.startNodeVisit(fence, { path: "implement", visit: 1, nodeKind: "agent" }));
          const messageId = `msg:${RUN}:implement:1:notify`;
          saved(
            h.store.enqueueMessage(fence, {
              messageId,
              kind: "notify",
              path: "implement",
              visit: 1,
              body: "FYI",
              triggerTurn: false,
            }),
          );
          return { sessionId: SESSION, messageId };
        },
      ],
      [
        "a cancelled step prompt",
        () => {
          const fence = runningRun(h.store, RUN);
          saved(h.store.startNodeVisit(fence, { path: "implement", visit: 1, nodeKind: "agent" }));
          const messageId = promptId(RUN, "implement", 1);
          saved(
            h.store.enqueueMessage(fence, {
              messageId,
              kind: "step_prompt",
              path: "implement",
              visit: 1,
              body: "Do it.",
              triggerTurn: true,
            }),
          );
          saved(h.store.cancelMessage({ messageId }));
          return { sessionId: SESSION, messageId };
        },
      ],
      [
        "the step prompt of a visit that already finished",
        () => {
          const fence = runningRun(h.store, RUN);
          const messageId = deliverPrompt(fence);
          saved(
            h.store.finishNodeVisit(fence, {
              path: "implement",
              visit: 1,
              result: { status: "succeeded", output: "done", next: null },
            }),
          );
          return { sessionId: SESSION, messageId };
        },
      ],
    ];

    it.each(cases)("%s gives owner none, and a repeat stays none", (_what, arrange) => {
      const { sessionId, messageId } = arrange();
      const before = runSnapshot(h.store, RUN);

      const first = h.store.startTurn({ sessionId, requestId: "req-9", messageId });
      expect(first).toEqual({ kind: "applied", value: noOwner(sessionId, "req-9", messageId) });
      const repeat = h.store.startTurn({ sessionId, requestId: "req-9", messageId });
      expect(repeat).toEqual({ kind: "adopted", value: noOwner(sessionId, "req-9", messageId) });

      // Nobody's turn is not the run's business: the run does not move.
      expect(runSnapshot(h.store, RUN)).toEqual(before);
    });
  });

  it("refuses a second workflow turn while one is open in the session, changing nothing", () => {
    const fence = runningRun(h.store, RUN);
    const first = deliverPrompt(fence);
    const second = deliverPrompt(fence, "implement", 1, 2);
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: first }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: second })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "turn",
        id: TURN_1,
        expected: "ended",
        actual: "open",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    // Nothing was saved for req-2: once the first turn ends, the same request is accepted.
    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-2", reason: "completed" })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "not_found" },
    });
    saved(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" }));
    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: second })).toEqual({
      kind: "applied",
      value: workflowTurn("req-2", second),
    });
  });

  it.each([
    ["a missing message ID", { sessionId: SESSION, requestId: "req-1" }],
    ["a session ID with a space", { sessionId: "session 1", requestId: "req-1", messageId: "m" }],
    ["an empty request ID", { sessionId: SESSION, requestId: "", messageId: "m" }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    expectRefusedBySchema(startTurnSchema, req);
  });
});

describe("endTurn", () => {
  function openTurn(requestId = "req-1"): { fence: Fence; messageId: string } {
    const fence = runningRun(h.store, RUN);
    const messageId = deliverPrompt(fence);
    saved(h.store.startTurn({ sessionId: SESSION, requestId, messageId }));
    return { fence, messageId };
  }

  it("ends the open workflow turn as applied", () => {
    const { messageId } = openTurn();
    const before = runSnapshot(h.store, RUN);

    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })).toEqual({
      kind: "applied",
      value: { ...workflowTurn("req-1", messageId).turn, status: "ended", endReason: "completed" },
    });
    expect(h.store.getRun(RUN)?.revision).toBe(before.revision + 1);
    expect(lastEvent(RUN)).toMatchObject({
      type: "turn.ended",
      path: "implement",
      visit: 1,
      data: { reason: "completed" },
    });
  });

  it("adopts a repeated end with the same reason and refuses another reason, changing nothing", () => {
    const { messageId } = openTurn();
    saved(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "aborted" }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "aborted" })).toEqual({
      kind: "adopted",
      value: { ...workflowTurn("req-1", messageId).turn, status: "ended", endReason: "aborted" },
    });
    for (const reason of ["completed", "error"] as const) {
      expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason })).toEqual({
        kind: "conflict",
        evidence: {
          kind: "state_mismatch",
          resource: "turn",
          id: TURN_1,
          expected: "open",
          actual: "ended",
        },
      });
    }
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("reports an unknown turn as not_found, changing nothing", () => {
    openTurn("req-1");
    const before = runSnapshot(h.store, RUN);
    expect(h.store.endTurn({ sessionId: SESSION, requestId: "never-started", reason: "completed" })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "turn", id: "session-1:never-started" },
    });
    // The same request ID in another session is another turn.
    expect(h.store.endTurn({ sessionId: "session-2", requestId: "req-1", reason: "completed" })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "turn", id: "session-2:req-1" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses to end a turn no workflow owns", () => {
    runningRun(h.store, RUN);
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: "pi-user-entry-1" }));
    const before = runSnapshot(h.store, RUN);
    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "turn",
        id: TURN_1,
        expected: "open",
        actual: "unowned",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it.each([
    [
      "finishRun",
      (fence: Fence) => saved(h.store.finishRun(fence, { outcome: "completed", output: { ok: 1 } })),
    ],
    [
      "finishRun (failed)",
      (fence: Fence) =>
        saved(
          h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "boom" } }),
        ),
    ],
    ["cancelRun", () => saved(h.store.cancelRun({ runId: RUN }))],
  ])(
    "after %s the open turn is lost: a late end conflicts and later turns get owner none",
    (_what, terminate) => {
      const { fence, messageId } = openTurn();
      terminate(fence);
      const before = runSnapshot(h.store, RUN);

      expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })).toEqual({
        kind: "conflict",
        evidence: {
          kind: "state_mismatch",
          resource: "turn",
          id: TURN_1,
          expected: "open",
          actual: "lost",
        },
      });
      // A repeated agent_start report returns the saved turn, which is no longer open.
      expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId })).toMatchObject({
        kind: "adopted",
        value: { turn: { status: "lost", endReason: null } },
      });
      // The next ordinary Pi turn, and even a re-proposal of the old prompt, inherit no ownership.
      expect(
        h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: "pi-user-entry-2" }),
      ).toEqual({
        kind: "applied",
        value: noOwner(SESSION, "req-2", "pi-user-entry-2"),
      });
      expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-3", messageId })).toEqual({
        kind: "applied",
        value: noOwner(SESSION, "req-3", messageId),
      });
      expect(
        h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: "pi-user-entry-2" }),
      ).toEqual({
        kind: "adopted",
        value: noOwner(SESSION, "req-2", "pi-user-entry-2"),
      });
      expect(h.store.settleSessionTurns({ sessionId: SESSION })).toEqual({ kind: "adopted", value: [] });
      expect(runSnapshot(h.store, RUN)).toEqual(before);
    },
  );

  it("loses the open turn when the run parks after a crash", () => {
    const { fence } = openTurn();
    const relaunched = crashAndRelaunch(h.store, fence, "claim-2");
    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", actual: "lost" },
    });
    // The relaunched worker's new prompt for the same visit gets a new workflow turn.
    const again = deliverPrompt(relaunched, "implement", 1, 2);
    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: again })).toEqual({
      kind: "applied",
      value: workflowTurn("req-2", again),
    });
  });

  it.each([
    ["an unknown reason", { sessionId: SESSION, requestId: "req-1", reason: "finished" }],
    ["a missing reason", { sessionId: SESSION, requestId: "req-1" }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    expectRefusedBySchema(endTurnSchema, req);
  });
});

describe("settleSessionTurns", () => {
  it("marks the session's open turns lost, once", () => {
    const fence = runningRun(h.store, RUN);
    const messageId = deliverPrompt(fence);
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId }));
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: "pi-user-entry" }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.settleSessionTurns({ sessionId: SESSION })).toEqual({
      kind: "applied",
      value: [{ ...workflowTurn("req-1", messageId).turn, status: "lost" }],
    });
    expect(h.store.getRun(RUN)?.revision).toBe(before.revision + 1);
    expect(lastEvent(RUN)).toMatchObject({ type: "turn.lost", path: "implement", visit: 1 });
    expect(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", actual: "lost" },
    });

    const settled = runSnapshot(h.store, RUN);
    expect(h.store.settleSessionTurns({ sessionId: SESSION })).toEqual({ kind: "adopted", value: [] });
    expect(runSnapshot(h.store, RUN)).toEqual(settled);
    // The run is still running, so the next step prompt can start a new workflow turn.
    const next = deliverPrompt(fence, "implement", 1, 2);
    expect(h.store.startTurn({ sessionId: SESSION, requestId: "req-3", messageId: next })).toMatchObject({
      kind: "applied",
      value: { owner: "workflow", turn: { status: "open" } },
    });
  });

  it("leaves other sessions' open turns alone", () => {
    const mine = runningRun(h.store, RUN);
    const theirs = runningRun(h.store, "turns-2", { origin: { kind: "pi", sessionId: "session-2" } });
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: deliverPrompt(mine) }));
    saved(
      h.store.startTurn({ sessionId: "session-2", requestId: "req-1", messageId: deliverPrompt(theirs) }),
    );
    const before = runSnapshot(h.store, "turns-2");

    expect(saved(h.store.settleSessionTurns({ sessionId: SESSION })).map((t) => t.turnId)).toEqual([TURN_1]);
    expect(runSnapshot(h.store, "turns-2")).toEqual(before);
    expect(
      h.store.endTurn({ sessionId: "session-2", requestId: "req-1", reason: "completed" }),
    ).toMatchObject({
      kind: "applied",
      value: { status: "ended", runId: "turns-2" },
    });
  });

  it("adopts an empty list for a session with no turns; a malformed session ID is left to the protocol schema", () => {
    expect(h.store.settleSessionTurns({ sessionId: "quiet-session" })).toEqual({
      kind: "adopted",
      value: [],
    });
    expectRefusedBySchema(clientMethods["turns.settle"].params, { sessionId: "" });
    expectRefusedBySchema(clientMethods["turns.settle"].params, {});
  });
});

describe("turn identity", () => {
  it("gives sessions and requests whose IDs contain ':' distinct turns", () => {
    h = openHarness();
    const a = saved(h.store.startTurn({ sessionId: "a:b", requestId: "c", messageId: "m-1" }));
    const b = saved(h.store.startTurn({ sessionId: "a", requestId: "b:c", messageId: "m-1" }));
    expect(a.turn.turnId).not.toBe(b.turn.turnId);
    expect([a.owner, b.owner]).toEqual(["none", "none"]);
  });
});
