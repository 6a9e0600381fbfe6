import {
  type Fence,
  type JsonValue,
  type PrepareContinuation,
  prepareContinuationSchema,
  prepareRestartSchema,
  type RunEnding,
  type RunRecord,
} from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import {
  expectRefusedBySchema,
  openHarness,
  preparedRun,
  refused,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
  startingRun,
  thrownStoreError,
  unchanged,
} from "./fixtures.js";

const SESSION = "session-1";
const LEASE_MS = 30_000;
const CHECKPOINT = { path: "plan/review", visit: 2, prompt: "Approve the plan?" };

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function getRun(store: RunStore, runId: string): RunRecord {
  const run = store.getRun(runId);
  if (!run) throw new Error(`run ${runId} is missing`);
  return run;
}

/** A run that did real work (steps, an effect, messages) and then ended as `ending`. */
function finishedRun(store: RunStore, runId: string, ending: RunEnding, overrides = {}): Fence {
  const fence = runningRun(store, runId, overrides);
  saved(store.startNodeVisit(fence, { path: "plan", visit: 1, nodeKind: "agent" }));
  saved(
    store.enqueueMessage(fence, {
      messageId: `m-${runId}`,
      kind: "step_prompt",
      path: "plan",
      visit: 1,
      body: "Plan it.",
      triggerTurn: true,
    }),
  );
  saved(
    store.reserveEffect(fence, {
      effectId: `${runId}/plan#1/write:0`,
      path: "plan",
      visit: 1,
      effectType: "write",
      ordinal: 0,
      mode: "idempotent",
      request: { file: "plan.md" },
    }),
  );
  saved(
    store.settleEffect(fence, {
      effectId: `${runId}/plan#1/write:0`,
      result: { ok: true, value: "written" },
    }),
  );
  saved(
    store.finishNodeVisit(fence, {
      path: "plan",
      visit: 1,
      result: { status: "succeeded", output: { plan: "p" }, next: "plan/review" },
    }),
  );
  saved(store.startNodeVisit(fence, { path: "plan/review", visit: 1, nodeKind: "checkpoint" }));
  saved(
    store.finishNodeVisit(fence, {
      path: "plan/review",
      visit: 1,
      result: { status: "succeeded", output: 1, next: "plan/review" },
    }),
  );
  saved(store.startNodeVisit(fence, { path: "plan/review", visit: 2, nodeKind: "checkpoint" }));
  saved(store.finishRun(fence, ending));
  return fence;
}

function waitingParent(store: RunStore, runId: string, overrides = {}): void {
  finishedRun(
    store,
    runId,
    {
      outcome: "waiting",
      checkpoint: CHECKPOINT,
      answerCheck: { kind: "worker_only", reason: "not checked in this test" },
    },
    overrides,
  );
}

function failedParent(store: RunStore, runId: string, overrides = {}): void {
  finishedRun(
    store,
    runId,
    { outcome: "failed", error: { code: "node_failed", message: "Boom." } },
    overrides,
  );
}

function continuation(
  runId: string,
  answer: JsonValue = { approved: true },
  parentRunId = "parent",
): PrepareContinuation {
  return {
    runId,
    parentRunId,
    answerer: "human",
    accepted: { path: CHECKPOINT.path, visit: CHECKPOINT.visit, answer },
  };
}

/** Put a run into each non-eligible state for the two lineage operations. */
function parentIn(store: RunStore, runId: string, state: string): void {
  switch (state) {
    case "queued":
      saved(store.reservePreparedRun(preparedRun(runId)));
      return;
    case "starting":
      startingRun(store, runId);
      return;
    case "running":
      runningRun(store, runId);
      return;
    case "parked":
      saved(store.parkRun(runningRun(store, runId), { code: "paused", message: "Held." }));
      return;
    case "done/completed":
      finishedRun(store, runId, { outcome: "completed", output: { ok: true } });
      return;
    case "failed/failed":
      failedParent(store, runId);
      return;
    case "failed/timed_out":
      finishedRun(store, runId, {
        outcome: "timed_out",
        error: { code: "node_timed_out", message: "Slow." },
      });
      return;
    case "cancelled":
      // A run that ran a node: a start cancelled during its launch keeps no input to restart with.
      saved(store.startNodeVisit(runningRun(store, runId), { path: "a", visit: 1, nodeKind: "compute" }));
      saved(store.cancelRun({ runId }));
      return;
    case "done/waiting":
      waitingParent(store, runId);
      return;
    default:
      throw new Error(`unknown state ${state}`);
  }
}

describe("prepareContinuation", () => {
  it("queues a continue child of a waiting parent with the parent's definition, input and lineage", () => {
    waitingParent(h.store, "parent", { input: { task: "build", files: ["a.ts"] } });
    const parent = getRun(h.store, "parent");
    expect(parent).toMatchObject({
      status: "done",
      outcome: "waiting",
      cursor: { path: "plan/review", visit: 2 },
    });
    const t = h.store.prepareContinuation(continuation("child"));
    expect(t.kind).toBe("applied");
    expect(saved(t)).toMatchObject({
      runId: "child",
      rootRunId: "parent",
      parentRunId: "parent",
      originCommand: "continue",
      nextCommand: "continue",
      restartNumber: 0,
      parentTerminalFingerprint: parent.terminalFingerprint,
      workflowName: parent.workflowName,
      source: parent.source,
      definitionDigest: parent.definitionDigest,
      origin: { kind: "pi", sessionId: SESSION },
      status: "queued",
      generation: 0,
      revision: 1,
      stepCount: 0,
      cursor: null,
      outcome: null,
    });
    expect(parent.terminalFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(h.store.readRunInput("child")).toEqual({
      kind: "saved",
      value: { task: "build", files: ["a.ts"] },
    });
    expect(h.store.listRunSteps("child")).toEqual([]);
    expect(h.store.listRunEffects("child")).toEqual([]);
    expect(h.store.findSessionReservation(SESSION)?.runId).toBe("child");
    expect(h.store.listRunEvents("child").map((e) => [e.type, e.data])).toEqual([
      ["run.queued", { command: "continue", parentRunId: "parent", answeredBy: "human" }],
    ]);
  });

  it("gives the child's worker a continue command that carries the exact accepted answer", () => {
    waitingParent(h.store, "parent");
    const answer = { approved: false, comments: ["tighten scope", "ünïcødé ✓"], score: 0.5, extra: null };
    saved(h.store.prepareContinuation(continuation("child", answer)));
    const claim = saved(h.store.claimRun({ runId: "child", claimToken: "tok", leaseMs: LEASE_MS }));
    expect(claim.command).toEqual({
      type: "continue",
      runId: "child",
      generation: 1,
      claimToken: "tok",
      parentRunId: "parent",
      accepted: { path: "plan/review", visit: 2, answer },
    });
  });

  it.each([null, "yes", 0, [1, 2]])("carries a non-object answer %j exactly", (answer) => {
    waitingParent(h.store, "parent");
    saved(h.store.prepareContinuation(continuation("child", answer)));
    const claim = saved(h.store.claimRun({ runId: "child", claimToken: "tok", leaseMs: LEASE_MS }));
    expect(claim.command.type === "continue" && claim.command.accepted.answer).toEqual(answer);
  });

  it("adopts a repeat with the same child ID and answer, whatever the key order", () => {
    waitingParent(h.store, "parent");
    const first = saved(h.store.prepareContinuation(continuation("child", { a: 1, b: 2 })));
    const again = unchanged(h.store, ["parent", "child"], () =>
      h.store.prepareContinuation(continuation("child", { b: 2, a: 1 })),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("refuses a second, different continuation of the same parent (child_exists)", () => {
    waitingParent(h.store, "parent");
    saved(h.store.prepareContinuation(continuation("child", { approved: true })));
    expect(
      refusedWithoutChange(h.store, ["parent", "child", "child-2"], () =>
        h.store.prepareContinuation(continuation("child-2", { approved: true })),
      ),
    ).toEqual({ kind: "child_exists", parentRunId: "parent", childRunId: "child" });
    expect(h.store.getRun("child-2")).toBeNull();
    expect(
      refusedWithoutChange(h.store, ["parent", "child"], () =>
        h.store.prepareContinuation(continuation("child", { approved: false })),
      ),
    ).toEqual({ kind: "child_exists", parentRunId: "parent", childRunId: "child" });
  });

  it("refuses the model's answer to a checkpoint a person answers (answer_refused) and saves nothing", () => {
    waitingParent(h.store, "parent");
    const error = unchanged(h.store, ["parent"], () =>
      thrownStoreError(() => h.store.prepareContinuation({ ...continuation("child"), answerer: "model" })),
    );
    expect(error.code).toBe("answer_refused");
    expect(error.message).toContain("for a person to answer");
    expect(h.store.getRun("child")).toBeNull();
  });

  it.each([
    ["another path", { path: "plan/other", visit: 2 }, "plan/other#2"],
    ["another visit", { path: "plan/review", visit: 1 }, "plan/review#1"],
  ])("refuses an answer for %s than the saved checkpoint (state_mismatch)", (_what, at, actual) => {
    waitingParent(h.store, "parent");
    const evidence = refusedWithoutChange(h.store, ["parent", "child"], () =>
      h.store.prepareContinuation({
        runId: "child",
        parentRunId: "parent",
        answerer: "human",
        accepted: { ...at, answer: true },
      }),
    );
    expect(evidence).toEqual({
      kind: "state_mismatch",
      resource: "run",
      id: "parent",
      expected: "plan/review#2",
      actual,
    });
    expect(h.store.getRun("child")).toBeNull();
  });

  it.each([
    ["queued", "queued", null],
    ["starting", "starting", null],
    ["running", "running", null],
    ["parked", "parked", null],
    ["done/completed", "done", "completed"],
    ["failed/failed", "failed", "failed"],
    ["failed/timed_out", "failed", "timed_out"],
    ["cancelled", "cancelled", "cancelled"],
  ] as const)("refuses a %s parent (parent_not_eligible, requires waiting)", (state, status, outcome) => {
    parentIn(h.store, "parent", state);
    const evidence = refusedWithoutChange(h.store, ["parent", "child"], () =>
      h.store.prepareContinuation(continuation("child")),
    );
    expect(evidence).toEqual({
      kind: "parent_not_eligible",
      parentRunId: "parent",
      status,
      outcome,
      requires: "waiting",
    });
    expect(h.store.getRun("child")).toBeNull();
  });

  it("refuses a child ID that already names another run (request_mismatch)", () => {
    saved(h.store.reservePreparedRun(preparedRun("taken", { origin: { kind: "cli" } })));
    waitingParent(h.store, "parent");
    expect(
      refusedWithoutChange(h.store, ["parent", "taken"], () =>
        h.store.prepareContinuation(continuation("taken")),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "taken" });
    expect(
      refusedWithoutChange(h.store, ["parent"], () => h.store.prepareContinuation(continuation("parent"))),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "parent" });
  });

  it("refuses while another run holds the parent's session (session_busy)", () => {
    waitingParent(h.store, "parent");
    saved(h.store.reservePreparedRun(preparedRun("other")));
    expect(
      refusedWithoutChange(h.store, ["parent", "other", "child"], () =>
        h.store.prepareContinuation(continuation("child")),
      ),
    ).toEqual({ kind: "session_busy", sessionId: SESSION, activeRunId: "other" });
    expect(h.store.getRun("child")).toBeNull();
  });

  it("continues a CLI parent without touching any session", () => {
    waitingParent(h.store, "parent", { origin: { kind: "cli" } });
    saved(h.store.reservePreparedRun(preparedRun("pi-run")));
    expect(saved(h.store.prepareContinuation(continuation("child"))).origin).toEqual({ kind: "cli" });
  });

  it("returns not_found for an unknown parent", () => {
    expect(refused(h.store.prepareContinuation(continuation("child", true, "ghost")))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "ghost",
    });
    expect(h.store.getRun("child")).toBeNull();
  });

  it.each<[string, unknown]>([
    [
      "a malformed path",
      {
        runId: "c",
        parentRunId: "parent",
        answerer: "human",
        accepted: { path: "a//b", visit: 1, answer: 1 },
      },
    ],
    [
      "visit 0",
      { runId: "c", parentRunId: "parent", answerer: "human", accepted: { path: "a", visit: 0, answer: 1 } },
    ],
    [
      "no answer",
      { runId: "c", parentRunId: "parent", answerer: "human", accepted: { path: "a", visit: 1 } },
    ],
    [
      "a bad child ID",
      { runId: "-c", parentRunId: "parent", answerer: "human", accepted: { path: "a", visit: 1, answer: 1 } },
    ],
    ["no answerer", { runId: "c", parentRunId: "parent", accepted: { path: "a", visit: 1, answer: 1 } }],
    [
      "an unknown answerer",
      { runId: "c", parentRunId: "parent", answerer: "robot", accepted: { path: "a", visit: 1, answer: 1 } },
    ],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    expectRefusedBySchema(prepareContinuationSchema, req);
  });
});

/** A parent waiting at CHECKPOINT whose saved answer check is this JSON Schema. */
function waitingWithSchema(store: RunStore, runId: string, schema: Record<string, JsonValue>): void {
  finishedRun(store, runId, {
    outcome: "waiting",
    checkpoint: CHECKPOINT,
    answerCheck: { kind: "json_schema", schema },
  });
}

const SHIP_SCHEMA = {
  type: "object",
  properties: { ship: { type: "boolean" }, note: { type: "string", maxLength: 5 } },
  required: ["ship"],
};

/** The continuation's worker refuses its answer before running any node (the engine's last word). */
function rejectAnswer(store: RunStore, childId: string): void {
  const claim = saved(store.claimRun({ runId: childId, claimToken: `tok-${childId}`, leaseMs: LEASE_MS }));
  const fence = { runId: childId, generation: claim.command.generation, claimToken: `tok-${childId}` };
  saved(store.markRunning(fence));
  saved(
    store.finishRun(fence, {
      outcome: "failed",
      error: { code: "answer_invalid", message: "The answer to plan/review is invalid at n." },
    }),
  );
}

describe("answers checked before a continuation is saved", () => {
  it("refuses an answer that fails the saved schema with answer_invalid naming the fields, and saves nothing", () => {
    waitingWithSchema(h.store, "parent", SHIP_SCHEMA);
    const error = unchanged(h.store, ["parent", "child"], () =>
      thrownStoreError(() =>
        h.store.prepareContinuation(continuation("child", { ship: "SECRET", note: "SECRET-long" })),
      ),
    );
    expect(error.code).toBe("answer_invalid");
    expect(error.message).toBe(
      "The answer does not match checkpoint plan/review: note: Too big: expected string to have <=5 characters; " +
        "ship: Invalid input: expected boolean, received string. Nothing was saved; answer again.",
    );
    expect(h.store.listRuns()).toHaveLength(1);
    // The checkpoint is not burned: a fitting answer is taken.
    expect(saved(h.store.prepareContinuation(continuation("child", { ship: true })))).toMatchObject({
      runId: "child",
      parentRunId: "parent",
    });
  });

  it("keeps the checkpoint open after a continuation refused its answer, and still allows only one that counts", () => {
    // A worker-only check (as for a refinement): the store takes the answer, the worker judges it.
    waitingParent(h.store, "parent");
    saved(h.store.prepareContinuation(continuation("child-1", { n: 1 })));
    rejectAnswer(h.store, "child-1");
    expect(getRun(h.store, "child-1")).toMatchObject({ status: "failed", errorCode: "answer_invalid" });
    expect(getRun(h.store, "parent")).toMatchObject({ status: "done", outcome: "waiting" });
    const second = saved(h.store.prepareContinuation(continuation("child-2", { n: 9 })));
    expect(second).toMatchObject({ runId: "child-2", parentRunId: "parent", originCommand: "continue" });
    expect(
      refusedWithoutChange(h.store, ["parent", "child-2"], () =>
        h.store.prepareContinuation(continuation("child-3", { n: 9 })),
      ),
    ).toEqual({ kind: "child_exists", parentRunId: "parent", childRunId: "child-2" });
  });

  it("lets only a continuation that ran no node end with answer_invalid", () => {
    const answerInvalid = {
      outcome: "failed",
      error: { code: "answer_invalid", message: "The answer is invalid." },
    } as const;
    const refusal = (runId: string) =>
      `Run ${runId} cannot end with answer_invalid: only a continuation that ran no node can.`;
    const started = runningRun(h.store, "started");
    expect(
      unchanged(h.store, ["started"], () =>
        thrownStoreError(() => h.store.finishRun(started, answerInvalid)),
      ),
    ).toMatchObject({ code: "invalid_record", message: refusal("started") });
    waitingParent(h.store, "parent", { origin: { kind: "cli" } });
    saved(h.store.prepareContinuation(continuation("child", { n: 1 })));
    const claim = saved(h.store.claimRun({ runId: "child", claimToken: "tok", leaseMs: LEASE_MS }));
    const fence = { runId: "child", generation: claim.command.generation, claimToken: "tok" };
    saved(h.store.markRunning(fence));
    saved(h.store.startNodeVisit(fence, { path: "apply", visit: 1, nodeKind: "compute" }));
    expect(
      unchanged(h.store, ["child"], () => thrownStoreError(() => h.store.finishRun(fence, answerInvalid))),
    ).toMatchObject({ code: "invalid_record", message: refusal("child") });
  });
});

describe("prepareRestart", () => {
  it("queues a fresh restart child of a failed parent: lineage saved, nothing else copied", () => {
    failedParent(h.store, "parent", { input: { task: "retry me" }, presentationInstructions: "Report." });
    const parent = getRun(h.store, "parent");
    expect(h.store.listRunSteps("parent")).toHaveLength(3);
    expect(h.store.listRunEffects("parent")).toHaveLength(1);
    const t = h.store.prepareRestart({ runId: "child", parentRunId: "parent" });
    expect(t.kind).toBe("applied");
    expect(saved(t)).toMatchObject({
      runId: "child",
      rootRunId: "parent",
      parentRunId: "parent",
      originCommand: "restart",
      nextCommand: "restart",
      restartNumber: 1,
      parentTerminalFingerprint: parent.terminalFingerprint,
      workflowName: parent.workflowName,
      definitionDigest: parent.definitionDigest,
      source: parent.source,
      status: "queued",
      outcome: null,
      errorCode: null,
      stepCount: 0,
      cursor: null,
      progressRevision: 0,
    });
    expect(parent.terminalFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(h.store.listRunSteps("child")).toEqual([]);
    expect(h.store.listRunEffects("child")).toEqual([]);
    const all = h.store.listSessionMessages(SESSION, ["pending", "claimed", "delivered", "cancelled"]);
    expect(all.filter((m) => m.runId === "child")).toEqual([]);
    expect(all.filter((m) => m.runId === "parent").length).toBeGreaterThan(0);
    expect(h.store.readRunFinalOutput("child")).toBeNull();
    expect(h.store.readRunError("child")).toBeNull();
    expect(h.store.readRunInput("child")).toEqual({ kind: "saved", value: { task: "retry me" } });
    expect(h.store.readPresentationInstructions("child")).toBe("Report.");
    // The parent keeps its own history untouched.
    expect(h.store.listRunSteps("parent")).toHaveLength(3);
    expect(h.store.readRunError("parent")).toEqual({ code: "node_failed", message: "Boom." });
  });

  it("gives the child's worker a restart command with the parent and restart number", () => {
    failedParent(h.store, "parent");
    saved(h.store.prepareRestart({ runId: "child", parentRunId: "parent" }));
    const claim = saved(h.store.claimRun({ runId: "child", claimToken: "tok", leaseMs: LEASE_MS }));
    expect(claim.command).toEqual({
      type: "restart",
      runId: "child",
      generation: 1,
      claimToken: "tok",
      parentRunId: "parent",
      restartNumber: 1,
    });
  });

  it("keeps the root and counts restarts along a chain", () => {
    failedParent(h.store, "root");
    saved(h.store.prepareRestart({ runId: "r1", parentRunId: "root" }));
    const claim = saved(h.store.claimRun({ runId: "r1", claimToken: "tok-1", leaseMs: LEASE_MS }));
    const fence = { runId: "r1", generation: claim.command.generation, claimToken: "tok-1" };
    saved(
      h.store.finishRun(fence, { outcome: "failed", error: { code: "activation_failed", message: "x" } }),
    );
    const r1 = getRun(h.store, "r1");
    const r2 = saved(h.store.prepareRestart({ runId: "r2", parentRunId: "r1" }));
    expect(r2).toMatchObject({
      rootRunId: "root",
      parentRunId: "r1",
      restartNumber: 2,
      parentTerminalFingerprint: r1.terminalFingerprint,
    });
    expect(r1.terminalFingerprint).not.toBe(getRun(h.store, "root").terminalFingerprint);
  });

  it.each(["done/completed", "done/waiting", "failed/timed_out", "cancelled"])(
    "restarts a terminal %s parent",
    (state) => {
      parentIn(h.store, "parent", state);
      const child = h.store.prepareRestart({ runId: "child", parentRunId: "parent" });
      expect(child.kind).toBe("applied");
      expect(saved(child)).toMatchObject({ parentRunId: "parent", nextCommand: "restart", status: "queued" });
    },
  );

  it.each(["queued", "starting", "running", "parked"] as const)(
    "refuses a %s parent (parent_not_eligible, requires terminal)",
    (state) => {
      parentIn(h.store, "parent", state);
      const evidence = refusedWithoutChange(h.store, ["parent", "child"], () =>
        h.store.prepareRestart({ runId: "child", parentRunId: "parent" }),
      );
      expect(evidence).toEqual({
        kind: "parent_not_eligible",
        parentRunId: "parent",
        status: state,
        outcome: null,
        requires: "terminal",
      });
      expect(h.store.getRun("child")).toBeNull();
    },
  );

  it("adopts a repeat with the same child ID and refuses a second restart (child_exists)", () => {
    failedParent(h.store, "parent");
    const first = saved(h.store.prepareRestart({ runId: "child", parentRunId: "parent" }));
    expect(
      unchanged(h.store, ["parent", "child"], () =>
        h.store.prepareRestart({ runId: "child", parentRunId: "parent" }),
      ),
    ).toEqual({ kind: "adopted", value: first });
    expect(
      refusedWithoutChange(h.store, ["parent", "child", "child-2"], () =>
        h.store.prepareRestart({ runId: "child-2", parentRunId: "parent" }),
      ),
    ).toEqual({ kind: "child_exists", parentRunId: "parent", childRunId: "child" });
    expect(h.store.getRun("child-2")).toBeNull();
  });

  it("keeps one restart per parent even after the first restart ended", () => {
    failedParent(h.store, "parent");
    saved(h.store.prepareRestart({ runId: "child", parentRunId: "parent" }));
    saved(h.store.cancelRun({ runId: "child" }));
    expect(refused(h.store.prepareRestart({ runId: "child-2", parentRunId: "parent" }))).toEqual({
      kind: "child_exists",
      parentRunId: "parent",
      childRunId: "child",
    });
  });

  it("refuses a child ID that already names another run (request_mismatch)", () => {
    failedParent(h.store, "parent");
    saved(h.store.reservePreparedRun(preparedRun("taken", { origin: { kind: "cli" } })));
    expect(
      refusedWithoutChange(h.store, ["parent", "taken"], () =>
        h.store.prepareRestart({ runId: "taken", parentRunId: "parent" }),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "taken" });
  });

  it("refuses while another run holds the parent's session (session_busy)", () => {
    failedParent(h.store, "parent");
    saved(h.store.reservePreparedRun(preparedRun("other")));
    expect(
      refusedWithoutChange(h.store, ["parent", "other", "child"], () =>
        h.store.prepareRestart({ runId: "child", parentRunId: "parent" }),
      ),
    ).toEqual({ kind: "session_busy", sessionId: SESSION, activeRunId: "other" });
  });

  it("returns not_found for an unknown parent; a malformed request is left to the protocol schema", () => {
    expect(refused(h.store.prepareRestart({ runId: "child", parentRunId: "ghost" }))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "ghost",
    });
    for (const req of [
      { runId: "child" },
      { runId: "a b", parentRunId: "parent" },
      { parentRunId: "parent" },
    ]) {
      expectRefusedBySchema(prepareRestartSchema, req);
    }
  });
});
