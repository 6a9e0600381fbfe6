import {
  clientMethods,
  type EnqueueMessage,
  enqueueMessageSchema,
  type Fence,
  type MessageRecord,
} from "@piw/protocol";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  flatRun,
  endedRun,
  claimRunning,
  crashAndRelaunch,
  expectRefusedBySchema,
  expectStoreError,
  openHarness,
  preparedRun,
  runningRun,
  runSnapshot,
  type StoreHarness,
  saved,
} from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUN = "outbox-1";
const SESSION = "session-1";
const ALL_STATUSES: MessageRecord["status"][] = ["pending", "claimed", "delivered", "cancelled"];

function lastEvent(runId: string) {
  return h.store.listRunEvents(runId).at(-1);
}

function openVisit(fence: Fence, path = "implement", visit = 1): void {
  saved(h.store.startNodeVisit(fence, { path, visit, nodeKind: "agent" }));
}

function prompt(fence: Fence, n: number, overrides: Partial<EnqueueMessage> = {}): EnqueueMessage {
  return {
    messageId: `msg:${fence.runId}:implement:1:step_prompt:${n}`,
    kind: "step_prompt",
    path: "implement",
    visit: 1,
    body: `Prompt ${n}: implement the change.`,
    triggerTurn: true,
    ...overrides,
  };
}

function statuses(sessionId = SESSION): Record<string, string> {
  return Object.fromEntries(
    h.store.listSessionMessages(sessionId, ALL_STATUSES).map((m) => [m.messageId, m.status]),
  );
}

describe("enqueueMessage", () => {
  it("queues a message for the run's session as applied, as progress", () => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const before = runSnapshot(h.store, RUN);

    expect(h.store.enqueueMessage(fence, prompt(fence, 1))).toEqual({
      kind: "applied",
      value: {
        messageId: `msg:${RUN}:implement:1:step_prompt:1`,
        runId: RUN,
        sessionId: SESSION,
        kind: "step_prompt",
        path: "implement",
        visit: 1,
        body: "Prompt 1: implement the change.",
        triggerTurn: true,
        status: "pending",
        createdAt: h.clock.now,
        deliveredAt: null,
      },
    });
    expect(h.store.getRun(RUN)).toMatchObject({
      revision: before.revision + 1,
      progressRevision: before.revision + 1,
    });
    expect(lastEvent(RUN)).toMatchObject({
      type: "message.queued",
      data: { kind: "step_prompt", messageId: `msg:${RUN}:implement:1:step_prompt:1` },
    });
    expect(h.store.listSessionMessages(SESSION).map((m) => m.messageId)).toEqual([
      `msg:${RUN}:implement:1:step_prompt:1`,
    ]);
  });

  it("adopts a repeat of the same deterministic ID and request, changing nothing", () => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const first = saved(h.store.enqueueMessage(fence, prompt(fence, 1)));
    h.clock.now += 5_000;
    const before = runSnapshot(h.store, RUN);

    expect(h.store.enqueueMessage(fence, prompt(fence, 1))).toEqual({ kind: "adopted", value: first });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listSessionMessages(SESSION)).toHaveLength(1);
  });

  it.each<[string, Partial<EnqueueMessage>]>([
    ["another body", { body: "Something else." }],
    ["another kind", { kind: "notify" }],
    ["another path", { path: "review" }],
    ["another visit", { visit: 2 }],
    ["another triggerTurn", { triggerTurn: false }],
  ])("refuses the same ID with %s as request_mismatch, changing nothing", (_what, change) => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const original = saved(h.store.enqueueMessage(fence, prompt(fence, 1)));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.enqueueMessage(fence, prompt(fence, 1, change))).toEqual({
      kind: "conflict",
      evidence: { kind: "request_mismatch", resource: "message", id: original.messageId },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listSessionMessages(SESSION)).toEqual([original]);
  });

  it("refuses an ID already used by another run", () => {
    const mine = runningRun(h.store, RUN);
    const theirs = runningRun(h.store, "outbox-2", { origin: { kind: "pi", sessionId: "session-2" } });
    openVisit(mine);
    openVisit(theirs);
    const id = saved(h.store.enqueueMessage(mine, prompt(mine, 1))).messageId;
    const before = runSnapshot(h.store, "outbox-2");

    expect(h.store.enqueueMessage(theirs, prompt(mine, 1))).toEqual({
      kind: "conflict",
      evidence: { kind: "request_mismatch", resource: "message", id },
    });
    expect(runSnapshot(h.store, "outbox-2")).toEqual(before);
    expect(h.store.listSessionMessages("session-2")).toEqual([]);
  });

  it("refuses a new message while the run is not running, but adopts a saved one", () => {
    const first = runningRun(h.store, RUN);
    openVisit(first);
    const saved1 = saved(h.store.enqueueMessage(first, prompt(first, 1)));
    saved(h.store.parkRun(first, { code: "worker_lost", message: "lost", launchId: "launch-1" }));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-2", leaseMs: 30_000 }));
    const starting = { runId: RUN, generation: claim.command.generation, claimToken: "claim-2" };
    const before = runSnapshot(h.store, RUN);

    expect(h.store.enqueueMessage(starting, prompt(starting, 2))).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "running", actual: "starting" },
    });
    expect(h.store.enqueueMessage(starting, prompt(starting, 1))).toEqual({ kind: "adopted", value: saved1 });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it("refuses a stale fence and an unknown run, changing nothing", () => {
    const old = runningRun(h.store, RUN);
    openVisit(old);
    const current = crashAndRelaunch(h.store, old, "claim-2");
    const before = runSnapshot(h.store, RUN);

    expect(h.store.enqueueMessage(old, prompt(old, 1))).toEqual({
      kind: "conflict",
      evidence: {
        kind: "stale_fence",
        runId: RUN,
        expectedGeneration: old.generation,
        actualGeneration: current.generation,
        status: "running",
      },
    });
    expect(h.store.enqueueMessage({ ...current, runId: "ghost-1" }, prompt(current, 1))).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "ghost-1" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listSessionMessages(SESSION)).toEqual([]);
  });

  it("rejects an oversized body as payload_too_large and changes nothing", () => {
    h.cleanup();
    h = openHarness({ maxBlobBytes: 256 });
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const before = runSnapshot(h.store, RUN);

    expectStoreError(
      () => h.store.enqueueMessage(fence, prompt(fence, 1, { body: "p".repeat(257) })),
      "payload_too_large",
    );
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.listSessionMessages(SESSION, ALL_STATUSES)).toEqual([]);
    // Exactly at the limit is fine.
    expect(h.store.enqueueMessage(fence, prompt(fence, 1, { body: "p".repeat(256) })).kind).toBe("applied");
  });

  it.each([
    ["a terminal kind (only the store creates those)", { kind: "terminal" }],
    ["a message ID with a space", { messageId: "msg one" }],
    ["visit 0", { visit: 0 }],
    ["a body over 256 KiB", { body: "b".repeat(256 * 1024 + 1) }],
    ["a missing triggerTurn", { triggerTurn: undefined }],
    ["a missing path", { path: undefined }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, change) => {
    expectRefusedBySchema(enqueueMessageSchema, {
      ...prompt({ runId: RUN, generation: 1, claimToken: "c" }, 1),
      ...change,
    });
  });
});

describe("claimMessages", () => {
  function threeMessages(): Fence {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    for (const n of [1, 2, 3]) saved(h.store.enqueueMessage(fence, prompt(fence, n)));
    return fence;
  }

  const id = (n: number) => `msg:${RUN}:implement:1:step_prompt:${n}`;

  it("leases deliverable messages in order, up to the limit, to one deliverer", () => {
    threeMessages();
    const before = runSnapshot(h.store, RUN);

    const a = h.store.claimMessages({
      sessionId: SESSION,
      claimToken: "deliverer-a",
      leaseMs: 5_000,
      limit: 2,
    });
    expect(a.kind).toBe("applied");
    expect(saved(a).map((m) => [m.messageId, m.status])).toEqual([
      [id(1), "claimed"],
      [id(2), "claimed"],
    ]);
    // Claiming is bookkeeping, not workflow progress.
    expect(h.store.getRun(RUN)).toMatchObject({
      revision: before.revision + 1,
      progressRevision: before.progressRevision,
    });
    expect(lastEvent(RUN)).toMatchObject({ type: "message.claimed" });

    const b = saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-b", leaseMs: 5_000 }));
    expect(b.map((m) => m.messageId)).toEqual([id(3)]);
    expect(statuses()).toEqual({ [id(1)]: "claimed", [id(2)]: "claimed", [id(3)]: "claimed" });
  });

  it("adopts an empty claim when nothing is deliverable, and takes over an expired lease", () => {
    threeMessages();
    saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-a", leaseMs: 5_000 }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-b", leaseMs: 5_000 })).toEqual({
      kind: "adopted",
      value: [],
    });
    h.clock.now += 4_999;
    expect(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-b", leaseMs: 5_000 })).toEqual({
      kind: "adopted",
      value: [],
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);

    h.clock.now += 1;
    const takeover = h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-b", leaseMs: 5_000 });
    expect(takeover.kind).toBe("applied");
    expect(saved(takeover).map((m) => m.messageId)).toEqual([id(1), id(2), id(3)]);
    // The new lease runs from now: a third deliverer cannot take it straight back.
    h.clock.now += 4_999;
    expect(
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer-c", leaseMs: 1 })),
    ).toEqual([]);
  });

  it("never hands out another session's, a delivered or a cancelled message", () => {
    const fence = threeMessages();
    const other = runningRun(h.store, "outbox-2", { origin: { kind: "pi", sessionId: "session-2" } });
    openVisit(other);
    saved(h.store.enqueueMessage(other, prompt(other, 1)));
    saved(h.store.markMessageDelivered({ messageId: id(1) }));
    saved(h.store.cancelMessage({ messageId: id(2) }));

    expect(saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 }))).toEqual([
      expect.objectContaining({ messageId: id(3), runId: fence.runId, sessionId: SESSION }),
    ]);
    h.clock.now += 10_000;
    expect(
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d2", leaseMs: 1_000 })).map(
        (m) => m.messageId,
      ),
    ).toEqual([id(3)]);
  });

  // The claim token and lease are the host's own; what a client sends is checked by messages.claim.
  it.each([
    ["a limit of 0", { limit: 0 }],
    ["a limit over 500", { limit: 501 }],
    ["a missing session", { sessionId: undefined }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, change) => {
    expectRefusedBySchema(clientMethods["messages.claim"].params, { sessionId: SESSION, ...change });
  });
});

describe("markMessageDelivered and cancelMessage", () => {
  function claimedPrompt(): string {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const { messageId } = saved(h.store.enqueueMessage(fence, prompt(fence, 1)));
    saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 }));
    return messageId;
  }

  it("records delivery as applied, adopts a repeat, and refuses a later cancel", () => {
    const messageId = claimedPrompt();
    h.clock.now += 250;
    const delivered = h.store.markMessageDelivered({ messageId });
    expect(delivered).toMatchObject({
      kind: "applied",
      value: { messageId, status: "delivered", deliveredAt: h.clock.now },
    });
    expect(lastEvent(RUN)).toMatchObject({ type: "message.delivered", data: { messageId } });
    const before = runSnapshot(h.store, RUN);

    expect(h.store.markMessageDelivered({ messageId })).toEqual({ kind: "adopted", value: saved(delivered) });
    expect(h.store.cancelMessage({ messageId })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "message",
        id: messageId,
        expected: "pending",
        actual: "delivered",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    // A delivered message's lease is gone for good.
    h.clock.now += 60_000;
    expect(saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d2", leaseMs: 1_000 }))).toEqual(
      [],
    );
  });

  it("cancels a pending message as applied, adopts a repeat, and refuses a later delivery", () => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const { messageId } = saved(h.store.enqueueMessage(fence, prompt(fence, 1)));

    expect(h.store.cancelMessage({ messageId })).toMatchObject({
      kind: "applied",
      value: { messageId, status: "cancelled", deliveredAt: null },
    });
    const before = runSnapshot(h.store, RUN);
    expect(h.store.cancelMessage({ messageId })).toMatchObject({
      kind: "adopted",
      value: { status: "cancelled" },
    });
    expect(h.store.markMessageDelivered({ messageId })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "message",
        id: messageId,
        expected: "pending",
        actual: "cancelled",
      },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 }))).toEqual([]);
  });

  it("reports unknown message IDs as not_found and rejects malformed ones", () => {
    runningRun(h.store, RUN);
    const before = runSnapshot(h.store, RUN);
    for (const op of [h.store.markMessageDelivered.bind(h.store), h.store.cancelMessage.bind(h.store)]) {
      expect(op({ messageId: "msg:nobody:x:1:step_prompt" })).toEqual({
        kind: "conflict",
        evidence: { kind: "not_found", resource: "message", id: "msg:nobody:x:1:step_prompt" },
      });
    }
    expectRefusedBySchema(clientMethods["messages.delivered"].params, { messageId: "" });
    expectRefusedBySchema(clientMethods["messages.delivered"].params, {});
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });
});

describe("releaseMessage", () => {
  const id = (n: number) => `msg:${RUN}:implement:1:step_prompt:${n}`;

  it("gives a claimed message back as pending, first in line, without touching the run", () => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    for (const n of [1, 2]) saved(h.store.enqueueMessage(fence, prompt(fence, n)));
    saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 60_000, limit: 1 }));
    const before = runSnapshot(h.store, RUN);

    expect(h.store.releaseMessage({ sessionId: SESSION, messageId: id(1) })).toMatchObject({
      kind: "applied",
      value: { messageId: id(1), status: "pending" },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.releaseMessage({ sessionId: SESSION, messageId: id(1) })).toMatchObject({
      kind: "adopted",
      value: { status: "pending" },
    });
    // Long before the lease would have run out, the next claim takes it again, ahead of the second.
    expect(
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d2", leaseMs: 60_000, limit: 1 })).map(
        (m) => m.messageId,
      ),
    ).toEqual([id(1)]);
  });

  it("leaves a delivered or cancelled message, and another session's, as they are", () => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    for (const n of [1, 2, 3]) saved(h.store.enqueueMessage(fence, prompt(fence, n)));
    saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 60_000 }));
    saved(h.store.markMessageDelivered({ messageId: id(1) }));
    saved(h.store.cancelMessage({ messageId: id(2) }));
    const before = statuses();

    expect(h.store.releaseMessage({ sessionId: SESSION, messageId: id(1) })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "message",
        id: id(1),
        expected: "claimed",
        actual: "delivered",
      },
    });
    expect(h.store.releaseMessage({ sessionId: SESSION, messageId: id(2) })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", actual: "cancelled" },
    });
    expect(h.store.releaseMessage({ sessionId: "session-2", messageId: id(3) })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "message", id: id(3) },
    });
    expect(statuses()).toEqual(before);
    expectRefusedBySchema(clientMethods["messages.release"].params, { sessionId: SESSION, messageId: "" });
  });
});

describe("terminalization", () => {
  it.each([
    ["finishRun", (fence: Fence) => saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }))],
    ["cancelRun", () => saved(h.store.cancelRun({ runId: RUN }))],
  ])("%s cancels pending and claimed messages and leaves delivered ones", (_what, terminate) => {
    const fence = runningRun(h.store, RUN);
    openVisit(fence);
    const ids = [1, 2, 3].map((n) => saved(h.store.enqueueMessage(fence, prompt(fence, n))).messageId);
    const [delivered, claimed, pending] = ids as [string, string, string];
    saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000, limit: 2 }));
    saved(h.store.markMessageDelivered({ messageId: delivered }));

    terminate(fence);

    expect(statuses()).toEqual({ [delivered]: "delivered", [claimed]: "cancelled", [pending]: "cancelled" });
    // A late acknowledgement cannot revive a cancelled prompt.
    expect(h.store.markMessageDelivered({ messageId: claimed })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", actual: "cancelled" },
    });
    // Before the terminal messages exist there is nothing left to deliver.
    expect(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 })).toEqual({
      kind: "adopted",
      value: [],
    });
    saved(h.store.createTerminalMessages({ runId: RUN }));
    expect(
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 })).map(
        (m) => m.kind,
      ),
    ).toEqual(["terminal"]);
  });
});

describe("a notification at the run's end", () => {
  it.each([
    ["finishRun", (fence: Fence) => saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }))],
    ["cancelRun", () => saved(h.store.cancelRun({ runId: RUN }))],
  ])(
    "%s keeps a pending and a claimed notification, delivered once before the run's end message",
    (_what, terminate) => {
      const fence = runningRun(h.store, RUN);
      openVisit(fence);
      const note = (n: number): EnqueueMessage =>
        prompt(fence, n, {
          messageId: `msg:${RUN}:implement:1:notify:${n}`,
          kind: "notify",
          body: `Note ${n}.`,
          triggerTurn: false,
        });
      const claimed = saved(h.store.enqueueMessage(fence, note(1))).messageId;
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "d", leaseMs: 1_000 }));
      const pending = saved(h.store.enqueueMessage(fence, note(2))).messageId;

      terminate(fence);

      expect(statuses()).toEqual({ [claimed]: "claimed", [pending]: "pending" });
      // The deliverer that held the claim acknowledges it after the run's end.
      expect(saved(h.store.markMessageDelivered({ messageId: claimed })).status).toBe("delivered");
      saved(h.store.createTerminalMessages({ runId: RUN }));
      const next = saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "e", leaseMs: 1_000 }));
      expect(next.map((m) => [m.messageId, m.kind])).toEqual([
        [pending, "notify"],
        [`msg:${RUN}:terminal`, "terminal"],
      ]);
      for (const m of next) saved(h.store.markMessageDelivered({ messageId: m.messageId }));
      expect(h.store.claimMessages({ sessionId: SESSION, claimToken: "f", leaseMs: 1_000 })).toEqual({
        kind: "adopted",
        value: [],
      });
    },
  );
});

describe("createTerminalMessages", () => {
  const INSTRUCTIONS = "Summarize the result for the user in two sentences.";

  /** A terminal message as the store saves it: run-level, pending, for the run's session. */
  function terminalMessage(
    runId: string,
    kind: string,
    body: string,
    triggerTurn: boolean,
    sessionId = SESSION,
  ) {
    return {
      messageId: `msg:${runId}:${kind}`,
      runId,
      sessionId,
      kind,
      path: null,
      visit: null,
      body,
      triggerTurn,
      status: "pending",
      createdAt: h.clock.now,
      deliveredAt: null,
    };
  }

  function finishedNode(fence: Fence, path = "implement"): void {
    saved(h.store.startNodeVisit(fence, { path, visit: 1, nodeKind: "agent" }));
    saved(
      h.store.finishNodeVisit(fence, {
        path,
        visit: 1,
        result: { status: "succeeded", output: "ok", next: null },
      }),
    );
  }

  function byKind(messages: MessageRecord[]) {
    return Object.fromEntries(messages.map((m) => [m.kind, m]));
  }

  it("creates a terminal and a presentation message for a completed run with instructions", () => {
    const fence = runningRun(h.store, RUN, { presentationInstructions: INSTRUCTIONS });
    finishedNode(fence);
    const output = { answer: 42, files: ["a.ts", "b.ts"] };
    saved(h.store.finishRun(fence, { outcome: "completed", output }));
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "pending");
    expect(h.store.readPresentationInstructions(RUN)).toBe(INSTRUCTIONS);

    const created = h.store.createTerminalMessages({ runId: RUN });

    expect(created.kind).toBe("applied");
    const messages = saved(created);
    expect(messages).toHaveLength(2);
    expect(byKind(messages)).toEqual({
      terminal: terminalMessage(RUN, "terminal", `Workflow demo completed (run ${RUN}).`, false),
      presentation: terminalMessage(
        RUN,
        "presentation",
        `Workflow demo finished (run ${RUN}). ${INSTRUCTIONS}\n\nFinal output:\n${JSON.stringify(output, null, 2)}`,
        true,
      ),
    });
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "created");
    expect(lastEvent(RUN)).toMatchObject({ type: "run.presented" });
  });

  it("truncates a very large final output in the presentation message", () => {
    const fence = runningRun(h.store, RUN, { presentationInstructions: INSTRUCTIONS });
    saved(h.store.finishRun(fence, { outcome: "completed", output: { text: "x".repeat(20_000) } }));
    const presentation = saved(h.store.createTerminalMessages({ runId: RUN })).find(
      (m) => m.kind === "presentation",
    );
    const rendered = presentation?.body.split("Final output:\n")[1] ?? "";
    expect(rendered.endsWith("\n…(truncated)")).toBe(true);
    expect(rendered.length).toBe(16 * 1024 + "\n…(truncated)".length);
  });

  it("creates only a terminal message for a completed run without instructions", () => {
    const fence = runningRun(h.store, RUN);
    finishedNode(fence);
    saved(h.store.finishRun(fence, { outcome: "completed", output: null }));
    expect(saved(h.store.createTerminalMessages({ runId: RUN }))).toEqual([
      terminalMessage(RUN, "terminal", `Workflow demo completed (run ${RUN}).`, false),
    ]);
  });

  it("sends one launch_failure follow-up that triggers a turn when a run fails before any node (one-follow-up rule)", () => {
    saved(h.store.reservePreparedRun(preparedRun(RUN)));
    const claim = saved(h.store.claimRun({ runId: RUN, claimToken: "claim-1", leaseMs: 30_000 }));
    const fence = { runId: RUN, generation: claim.command.generation, claimToken: "claim-1" };
    const message = "The workflow source changed after the run was prepared";
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "source_changed", message } }));
    // The failed launch released the session before the follow-up asks the model to start again.
    expect(h.store.findSessionReservation(SESSION)).toBeNull();

    const messages = saved(h.store.createTerminalMessages({ runId: RUN }));

    expect(messages).toEqual([
      terminalMessage(
        RUN,
        "launch_failure",
        `Workflow demo failed to start (run ${RUN}): ${message}. Inspect the error and call workflow start again only after you correct the cause.`,
        true,
      ),
    ]);
    expect(messages[0]?.body).toBe(
      "Workflow demo failed to start (run outbox-1): The workflow source changed after the run was prepared. " +
        "Inspect the error and call workflow start again only after you correct the cause.",
    );
  });

  it("treats a running run that failed before its first node as a launch failure too", () => {
    const fence = runningRun(h.store, RUN);
    saved(
      h.store.finishRun(fence, {
        outcome: "failed",
        error: { code: "input_invalid", message: "task is required" },
      }),
    );
    expect(saved(h.store.createTerminalMessages({ runId: RUN })).map((m) => [m.kind, m.triggerTurn])).toEqual(
      [["launch_failure", true]],
    );
  });

  it("creates a terminal message for a run that failed after a node", () => {
    const fence = runningRun(h.store, RUN);
    finishedNode(fence);
    saved(
      h.store.finishRun(fence, {
        outcome: "failed",
        error: { code: "node_failed", message: "npm test exited 1" },
      }),
    );
    expect(saved(h.store.createTerminalMessages({ runId: RUN }))).toEqual([
      terminalMessage(
        RUN,
        "terminal",
        `Workflow demo failed (run ${RUN}): [node_failed] npm test exited 1`,
        false,
      ),
    ]);
  });

  it("creates a terminal message for a run that timed out", () => {
    const fence = runningRun(h.store, RUN);
    finishedNode(fence);
    saved(
      h.store.finishRun(fence, {
        outcome: "timed_out",
        error: { code: "node_timed_out", message: "Node review ran past 600s" },
      }),
    );
    expect(saved(h.store.createTerminalMessages({ runId: RUN }))).toEqual([
      terminalMessage(
        RUN,
        "terminal",
        `Workflow demo timed out (run ${RUN}): [node_timed_out] Node review ran past 600s`,
        false,
      ),
    ]);
  });

  function waitingAt(checkpoint: { answeredBy?: "human" | "model" | "either"; answerSchema?: object }) {
    const fence = runningRun(h.store, RUN);
    finishedNode(fence);
    saved(h.store.startNodeVisit(fence, { path: "review/approve", visit: 1, nodeKind: "checkpoint" }));
    saved(
      h.store.finishRun(fence, {
        outcome: "waiting",
        checkpoint: { path: "review/approve", visit: 1, prompt: "Approve the plan?", ...checkpoint },
        answerCheck: { kind: "worker_only", reason: "not checked in this test" },
      } as never),
    );
    return saved(h.store.createTerminalMessages({ runId: RUN }));
  }

  it("creates a terminal message for a run waiting at a checkpoint, saying a person answers it", () => {
    expect(waitingAt({})).toEqual([
      terminalMessage(
        RUN,
        "terminal",
        `Workflow demo is waiting at checkpoint review/approve (run ${RUN}): Approve the plan?\n\nA person answers this checkpoint (/workflow answer ${RUN} <json>, or piw answer); the workflow tool cannot answer it.`,
        false,
      ),
    ]);
  });

  it("starts a turn for a checkpoint the model answers, with the call and the answer's schema", () => {
    // Saved as canonical JSON: the keys come back sorted.
    const schema = { properties: { ok: { type: "boolean" } }, required: ["ok"], type: "object" };
    expect(waitingAt({ answeredBy: "model", answerSchema: schema })).toEqual([
      terminalMessage(
        RUN,
        "terminal",
        `Workflow demo is waiting at checkpoint review/approve (run ${RUN}): Approve the plan?\n\nAnswer this checkpoint with the workflow tool with {"action":"answer","runId":"${RUN}","answer":<the answer>}. The answer must match this JSON Schema: ${JSON.stringify(schema)}`,
        true,
      ),
    ]);
  });

  it("tells the model it may answer a checkpoint either may answer, without starting a turn", () => {
    const [message] = waitingAt({ answeredBy: "either" });
    expect(message?.triggerTurn).toBe(false);
    expect(message?.body).toContain(
      "A person or you may answer this checkpoint; to answer it yourself, call the workflow tool",
    );
  });

  it.each([
    ["running", () => runningRun(h.store, RUN)],
    [
      "parked",
      () => {
        const fence = runningRun(h.store, RUN);
        saved(h.store.parkRun(fence, { code: "paused", message: "Paused." }));
      },
    ],
  ])("creates a terminal message for a run cancelled while %s", (_state, arrange) => {
    arrange();
    saved(h.store.cancelRun({ runId: RUN }));
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "pending");
    expect(saved(h.store.createTerminalMessages({ runId: RUN }))).toEqual([
      terminalMessage(RUN, "terminal", `Workflow demo was cancelled (run ${RUN}).`, false),
    ]);
  });

  it.each([
    ["queued", () => saved(h.store.reservePreparedRun(preparedRun(RUN)))],
    [
      "starting",
      () => {
        saved(h.store.reservePreparedRun(preparedRun(RUN)));
        saved(h.store.claimRun({ runId: RUN, claimToken: "claim-1", leaseMs: 30_000 }));
      },
    ],
  ])("creates no message for a launch cancelled while %s (the one-follow-up rule)", (_state, arrange) => {
    arrange();
    saved(h.store.cancelRun({ runId: RUN }));
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "none");
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);
    const before = runSnapshot(h.store, RUN);

    expect(h.store.createTerminalMessages({ runId: RUN })).toEqual({ kind: "adopted", value: [] });
    expect(h.store.listSessionMessages(SESSION, ALL_STATUSES)).toEqual([]);
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
  });

  it("creates the messages once: a second call adopts them and changes nothing", () => {
    const fence = runningRun(h.store, RUN, { presentationInstructions: INSTRUCTIONS });
    finishedNode(fence);
    saved(h.store.finishRun(fence, { outcome: "completed", output: { answer: 42 } }));
    const first = saved(h.store.createTerminalMessages({ runId: RUN }));
    h.clock.now += 1_000;
    const before = runSnapshot(h.store, RUN);

    expect(h.store.createTerminalMessages({ runId: RUN })).toEqual({ kind: "adopted", value: first });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(
      h.store
        .listSessionMessages(SESSION, ALL_STATUSES)
        .map((m) => m.messageId)
        .sort(),
    ).toEqual([`msg:${RUN}:presentation`, `msg:${RUN}:terminal`]);

    // Delivery state shows through on a later call.
    saved(h.store.markMessageDelivered({ messageId: `msg:${RUN}:terminal` }));
    expect(byKind(saved(h.store.createTerminalMessages({ runId: RUN }))).terminal?.status).toBe("delivered");
  });

  it.each([
    [
      "completed",
      (fence: Fence) => saved(h.store.finishRun(fence, { outcome: "completed", output: { a: 1 } })),
    ],
    [
      "failed",
      (fence: Fence) =>
        saved(
          h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "boom" } }),
        ),
    ],
    ["cancelled", () => saved(h.store.cancelRun({ runId: RUN }))],
  ])("creates no messages for a CLI-origin run that %s", (_what, terminate) => {
    const fence = runningRun(h.store, RUN, {
      origin: { kind: "cli" },
      presentationInstructions: INSTRUCTIONS,
    });
    terminate(fence);
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "none");
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);
    const before = runSnapshot(h.store, RUN);

    expect(h.store.createTerminalMessages({ runId: RUN })).toEqual({ kind: "adopted", value: [] });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
  });

  it.each([
    ["queued", () => saved(h.store.reservePreparedRun(preparedRun(RUN))), "queued"],
    ["running", () => runningRun(h.store, RUN), "running"],
    [
      "parked",
      () => saved(h.store.parkRun(runningRun(h.store, RUN), { code: "paused", message: "Paused." })),
      "parked",
    ],
  ])("refuses a %s run, which has no terminal facts yet, changing nothing", (_what, arrange, actual) => {
    arrange();
    const before = runSnapshot(h.store, RUN);
    expect(h.store.createTerminalMessages({ runId: RUN })).toEqual({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", id: RUN, expected: "terminal", actual },
    });
    expect(runSnapshot(h.store, RUN)).toEqual(before);
    expect(flatRun(h.store.getRun(RUN))).toHaveProperty("presentationState", "none");
    expect(h.store.listSessionMessages(SESSION, ALL_STATUSES)).toEqual([]);
  });

  it("reports an unknown run as not_found", () => {
    expect(h.store.createTerminalMessages({ runId: "ghost-1" })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "ghost-1" },
    });
  });

  it("records a presentation failure for repair without undoing the terminal state (presentation after terminal)", () => {
    const fence = runningRun(h.store, RUN);
    finishedNode(fence);
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "exit 2" } }));
    const corrupt = (mediaType: string) => {
      const db = new Database(h.store.file);
      try {
        db.prepare(
          "UPDATE blobs SET media_type = ? WHERE hash = (SELECT error_hash FROM runs WHERE run_id = ?)",
        ).run(mediaType, RUN);
      } finally {
        db.close();
      }
    };
    // Simulate facts the presenter cannot read: the error blob now claims to be JSON.
    corrupt("application/json");

    expect(h.store.createTerminalMessages({ runId: RUN })).toEqual({
      kind: "conflict",
      evidence: {
        kind: "state_mismatch",
        resource: "message",
        id: `msg:${RUN}:terminal`,
        expected: "presentable facts",
        actual: "wrong_media_type",
      },
    });
    expect(flatRun(h.store.getRun(RUN))).toMatchObject({
      status: "failed",
      outcome: "failed",
      claimed: false,
      presentationState: "failed",
    });
    expect(lastEvent(RUN)).toMatchObject({
      type: "run.presentation_failed",
      data: { code: "wrong_media_type" },
    });
    expect(h.store.listRunsNeedingPresentation()).toEqual([RUN]);
    expect(h.store.listSessionMessages(SESSION, ALL_STATUSES)).toEqual([]);
    // The session is free even though presentation failed.
    expect(h.store.findSessionReservation(SESSION)).toBeNull();

    corrupt("text/plain");
    expect(h.store.createTerminalMessages({ runId: RUN })).toMatchObject({
      kind: "applied",
      value: [{ kind: "terminal", body: `Workflow demo failed (run ${RUN}): [node_failed] exit 2` }],
    });
    expect(h.store.getRun(RUN)).toHaveProperty("presentationState", "created");
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);
  });
});

describe("listRunsNeedingPresentation", () => {
  it("lists terminal Pi runs, oldest finish first, until their messages are created", () => {
    const a = runningRun(h.store, "present-a", { origin: { kind: "pi", sessionId: "s-a" } });
    const b = runningRun(h.store, "present-b", { origin: { kind: "pi", sessionId: "s-b" } });
    const cli = runningRun(h.store, "present-cli", { origin: { kind: "cli" } });
    runningRun(h.store, "present-live", { origin: { kind: "pi", sessionId: "s-live" } });
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);

    h.clock.now += 1_000;
    saved(h.store.finishRun(b, { outcome: "completed", output: 1 }));
    h.clock.now += 1_000;
    saved(h.store.finishRun(a, { outcome: "failed", error: { code: "node_failed", message: "x" } }));
    saved(h.store.finishRun(cli, { outcome: "completed", output: 1 }));
    expect(h.store.listRunsNeedingPresentation()).toEqual(["present-b", "present-a"]);

    saved(h.store.createTerminalMessages({ runId: "present-b" }));
    expect(h.store.listRunsNeedingPresentation()).toEqual(["present-a"]);
    saved(h.store.createTerminalMessages({ runId: "present-a" }));
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);
  });

  it("keeps a run listed across a host restart until its messages exist", () => {
    const fence = runningRun(h.store, RUN);
    saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }));
    h.reopen();
    expect(h.store.listRunsNeedingPresentation()).toEqual([RUN]);
    expect(saved(h.store.createTerminalMessages({ runId: RUN })).map((m) => m.messageId)).toEqual([
      `msg:${RUN}:terminal`,
    ]);
    h.reopen();
    expect(h.store.listRunsNeedingPresentation()).toEqual([]);
  });
});

describe("typed readers with a failed ancestor (the typed-readers rule)", () => {
  const PARENT = "lineage-1";
  const CHILD = "lineage-2";
  const GRANDCHILD = "lineage-3";

  function failedParent(message: string): void {
    const fence = runningRun(h.store, PARENT);
    saved(h.store.startNodeVisit(fence, { path: "inspect", visit: 1, nodeKind: "shell" }));
    saved(
      h.store.finishNodeVisit(fence, {
        path: "inspect",
        visit: 1,
        result: { status: "failed", error: { code: "node_failed", message } },
      }),
    );
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message } }));
  }

  function restart(childId: string, parentId: string): Fence {
    saved(h.store.prepareRestart({ runId: childId, parentRunId: parentId }));
    return claimRunning(h.store, childId, `claim-${childId}`);
  }

  it.each([
    ["valid-JSON-looking text", '{"exitCode":2,"stderr":"boom"}'],
    ["broken-JSON text", 'Node inspect failed: unexpected token } in {"a":'],
    ["plain text", "npm test exited with code 2"],
  ])("returns the parent's %s error verbatim as text in the child's terminal facts", (_what, errorText) => {
    failedParent(errorText);
    const child = restart(CHILD, PARENT);
    saved(h.store.startNodeVisit(child, { path: "inspect", visit: 1, nodeKind: "shell" }));
    saved(
      h.store.finishNodeVisit(child, {
        path: "inspect",
        visit: 1,
        result: { status: "succeeded", output: { clean: true }, next: null },
      }),
    );
    saved(h.store.finishRun(child, { outcome: "completed", output: { fixed: true } }));

    const facts = h.store.readTerminalFacts(CHILD);
    expect(facts).toEqual({
      kind: "terminal",
      facts: {
        run: { runId: CHILD, workflowName: "demo", outcome: "completed", output: { fixed: true } },
        fingerprint: endedRun(h.store.getRun(CHILD)).terminalFingerprint,
        ancestors: [
          {
            runId: PARENT,
            workflowName: "demo",
            outcome: "failed",
            error: { code: "node_failed", message: errorText },
            duringLaunch: false,
          },
        ],
      },
    });
    if (facts.kind !== "terminal") throw new Error("unreachable");
    const ancestor = facts.facts.ancestors[0];
    expect(ancestor?.outcome === "failed" && typeof ancestor.error.message).toBe("string");
    expect(typeof facts.facts.fingerprint).toBe("string");

    expect(h.store.readRunError(PARENT)).toEqual({ code: "node_failed", message: errorText });
    expect(h.store.readRunError(CHILD)).toBeNull();
    expect(h.store.getRun(CHILD)).toMatchObject({
      parentRunId: PARENT,
      rootRunId: PARENT,
      originCommand: "restart",
      restartNumber: 1,
      parentTerminalFingerprint: endedRun(h.store.getRun(PARENT)).terminalFingerprint,
    });
    // Terminal messages for the child read the same facts and are not blocked by the ancestor.
    expect(saved(h.store.createTerminalMessages({ runId: CHILD })).map((m) => m.body)).toEqual([
      `Workflow demo completed (run ${CHILD}).`,
    ]);
  });

  it("lists every ancestor nearest first, with typed outcomes", () => {
    // The first run times out after one node; its restart fails before any node (a restart keeps the
    // input its parent holds, so it can be restarted); the second restart completes.
    const parent = claimRunning(
      h.store,
      saved(h.store.reservePreparedRun(preparedRun(PARENT))).runId,
      "claim-p",
    );
    saved(h.store.startNodeVisit(parent, { path: "build", visit: 1, nodeKind: "shell" }));
    saved(
      h.store.finishRun(parent, {
        outcome: "timed_out",
        error: { code: "node_timed_out", message: "build > 60s" },
      }),
    );
    saved(h.store.prepareRestart({ runId: CHILD, parentRunId: PARENT }));
    const claim = saved(h.store.claimRun({ runId: CHILD, claimToken: "claim-c", leaseMs: 30_000 }));
    saved(
      h.store.finishRun(
        { runId: CHILD, generation: claim.command.generation, claimToken: "claim-c" },
        { outcome: "failed", error: { code: "activation_failed", message: "worker exited: {oops" } },
      ),
    );
    const grandchild = restart(GRANDCHILD, CHILD);
    saved(h.store.finishRun(grandchild, { outcome: "completed", output: [1, 2, 3] }));

    const facts = h.store.readTerminalFacts(GRANDCHILD);
    expect(facts).toMatchObject({
      kind: "terminal",
      facts: {
        run: { runId: GRANDCHILD, outcome: "completed", output: [1, 2, 3] },
        ancestors: [
          {
            runId: CHILD,
            outcome: "failed",
            error: { code: "activation_failed", message: "worker exited: {oops" },
            duringLaunch: true,
          },
          {
            runId: PARENT,
            outcome: "timed_out",
            error: { code: "node_timed_out", message: "build > 60s" },
            duringLaunch: false,
          },
        ],
      },
    });
    expect(h.store.getRun(GRANDCHILD)).toMatchObject({
      rootRunId: PARENT,
      parentRunId: CHILD,
      restartNumber: 2,
    });
    expect(h.store.readRunError(PARENT)).toEqual({ code: "node_timed_out", message: "build > 60s" });
  });

  it("cancels a paused child of a failed run and presents it (the presentation-after-terminal rule)", () => {
    failedParent("exit 1: {");
    const child = restart(CHILD, PARENT);
    saved(h.store.requestPause({ runId: CHILD }));
    expect(h.store.startNodeVisit(child, { path: "inspect", visit: 1, nodeKind: "shell" }).kind).toBe(
      "recoveryRequired",
    );
    expect(h.store.getRun(CHILD)?.status).toBe("parked");

    expect(h.store.cancelRun({ runId: CHILD })).toMatchObject({
      kind: "applied",
      value: { status: "cancelled", outcome: "cancelled", presentationState: "pending" },
    });
    expect(saved(h.store.createTerminalMessages({ runId: CHILD })).map((m) => m.body)).toEqual([
      `Workflow demo was cancelled (run ${CHILD}).`,
    ]);
    expect(h.store.readTerminalFacts(CHILD)).toMatchObject({
      kind: "terminal",
      facts: {
        run: { runId: CHILD, outcome: "cancelled" },
        ancestors: [{ runId: PARENT, outcome: "failed", error: { message: "exit 1: {" } }],
      },
    });
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
  });

  it("reports a live run as not_terminal and an unknown run as a not_found error", () => {
    failedParent("boom");
    restart(CHILD, PARENT);
    expect(h.store.readTerminalFacts(CHILD)).toEqual({ kind: "not_terminal", status: "running" });
    expect(h.store.readRunError(CHILD)).toBeNull();
    expectStoreError(() => h.store.readRunError("ghost-1"), "not_found");
    expectStoreError(() => h.store.readTerminalFacts("ghost-1"), "not_found");
  });
});

describe("a pending presentation holds the session", () => {
  const INSTRUCTIONS = "Tell the user the result.";

  function presentedRun(): string {
    const fence = runningRun(h.store, RUN, { presentationInstructions: INSTRUCTIONS });
    saved(h.store.finishRun(fence, { outcome: "completed", output: { ok: true } }));
    const messages = saved(h.store.createTerminalMessages({ runId: RUN }));
    const presentation = messages.find((m) => m.kind === "presentation");
    if (!presentation) throw new Error("no presentation message");
    return presentation.messageId;
  }

  it("refuses a new run of the session until the presentation reached it, and names the run", () => {
    const presentationId = presentedRun();
    const refused = h.store.reservePreparedRun(preparedRun("outbox-2"));
    expect(refused).toEqual({
      kind: "conflict",
      evidence: { kind: "presentation_pending", sessionId: SESSION, runId: RUN },
    });
    expect(h.store.getRun("outbox-2")).toBeNull();
    // Another session is not held.
    saved(
      h.store.reservePreparedRun(preparedRun("outbox-3", { origin: { kind: "pi", sessionId: "other" } })),
    );
    // A restart from the same session is held the same way.
    expect(h.store.prepareRestart({ runId: "outbox-4", parentRunId: RUN })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "presentation_pending" },
    });

    saved(h.store.markMessageDelivered({ messageId: presentationId }));
    expect(h.store.reservePreparedRun(preparedRun("outbox-2")).kind).toBe("applied");
  });
});
