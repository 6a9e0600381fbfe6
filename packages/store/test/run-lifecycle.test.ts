import {
  clientMethods,
  type Fence,
  type RecoveryReason,
  RUN_TRANSITIONS,
  type RunRecord,
  type RunStatus,
  recoveryReasonSchema,
  reservePreparedRunSchema,
  runEndingSchema,
  type Transition,
} from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import {
  flatRun,
  endedRun,
  expectRefusedBySchema,
  openHarness,
  preparedRun,
  refused,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
  snapshot,
  startingRun,
  unchanged,
} from "./fixtures.js";

const SESSION = "session-1";
const LEASE_MS = 30_000;
const PAUSED: RecoveryReason = { code: "paused", message: "Paused by the user." };
const WORKER_LOST: RecoveryReason = {
  code: "worker_lost",
  message: "Worker vanished.",
  launchId: "launch-9",
};

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

/** The fence a worker would hold if it kept its token but learned the run's current generation. */
function currentFence(store: RunStore, fence: Fence): Fence {
  return { ...fence, generation: getRun(store, fence.runId).generation };
}

function lastEvent(store: RunStore, runId: string) {
  const events = store.listRunEvents(runId);
  return events[events.length - 1];
}

/** A running run parked at a node boundary by a pause request; returns the (now stale) fence. */
function pausedRun(store: RunStore, runId: string, overrides = {}): Fence {
  const fence = runningRun(store, runId, overrides);
  saved(store.requestPause({ runId }));
  const parked = store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" });
  expect(parked.kind).toBe("recoveryRequired");
  return fence;
}

/** A parent that finished `done` + `waiting` at checkpoint `review#1`. */
function waitingParent(store: RunStore, runId: string): void {
  const fence = runningRun(store, runId);
  saved(store.startNodeVisit(fence, { path: "review", visit: 1, nodeKind: "checkpoint" }));
  saved(
    store.finishRun(fence, {
      outcome: "waiting",
      checkpoint: { path: "review", visit: 1, prompt: "Approve the plan?" },
      answerCheck: { kind: "worker_only", reason: "not checked in this test" },
    }),
  );
}

describe("reservePreparedRun", () => {
  it("commits a queued run with its final ID and reserves the Pi session", () => {
    const t = h.store.reservePreparedRun(
      preparedRun("demo-1", { input: { task: "ship it", n: 3 }, presentationInstructions: "Summarize." }),
    );
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      runId: "demo-1",
      rootRunId: "demo-1",
      parentRunId: null,
      originCommand: "start",
      nextCommand: "start",
      restartNumber: 0,
      workflowName: "demo",
      definitionDigest: "digest-1",
      origin: { kind: "pi", sessionId: SESSION },
      status: "queued",
      outcome: null,
      generation: 0,
      claimed: false,
      leaseExpiresAt: null,
      revision: 1,
      progressRevision: 0,
      paused: false,
      recoveryReason: null,
      createdAt: h.clock.now,
      startedAt: null,
      finishedAt: null,
    });
    expect(h.store.getRun("demo-1")).toEqual(saved(t));
    expect(h.store.readRunInput("demo-1")).toEqual({ kind: "saved", value: { task: "ship it", n: 3 } });
    expect(h.store.readPresentationInstructions("demo-1")).toBe("Summarize.");
    expect(h.store.findSessionReservation(SESSION)?.runId).toBe("demo-1");
    expect(h.store.listRunEvents("demo-1").map((e) => [e.type, e.revision, e.data])).toEqual([
      ["run.queued", 1, { command: "start" }],
    ]);
  });

  it("adopts an identical repeat without changing anything, whatever the key order of the input", () => {
    const first = saved(h.store.reservePreparedRun(preparedRun("demo-1", { input: { a: 1, b: [1, 2] } })));
    h.clock.now += 5_000;
    const again = unchanged(h.store, ["demo-1"], () =>
      h.store.reservePreparedRun(preparedRun("demo-1", { input: { b: [1, 2], a: 1 } })),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it.each<[string, Parameters<typeof preparedRun>[1]]>([
    ["input", { input: { task: "something else" } }],
    ["workflow name", { workflowName: "other" }],
    ["definition digest", { definitionDigest: "digest-2" }],
    ["source", { source: { kind: "builtin", id: "demo", revision: "r1" } }],
    ["origin session", { origin: { kind: "pi", sessionId: "session-2" } }],
    ["origin kind", { origin: { kind: "cli" } }],
    ["manifest", { manifest: { nodes: ["a", "b", "c"] } }],
    ["presentation instructions", { presentationInstructions: "Say it differently." }],
  ])("refuses the same run ID with another %s (request_mismatch) and keeps the first", (_what, other) => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.reservePreparedRun(preparedRun("demo-1", other)),
    );
    expect(evidence).toEqual({ kind: "request_mismatch", resource: "run", id: "demo-1" });
    expect(h.store.readRunInput("demo-1")).toEqual({ kind: "saved", value: { task: "say hi" } });
    expect(h.store.readPresentationInstructions("demo-1")).toBeNull();
  });

  it.each(["queued", "starting", "running"] as const)(
    "refuses a second run in a session whose run is %s (session_busy names the active run)",
    (state) => {
      if (state === "queued") saved(h.store.reservePreparedRun(preparedRun("first")));
      if (state === "starting") startingRun(h.store, "first");
      if (state === "running") runningRun(h.store, "first");
      const evidence = refusedWithoutChange(h.store, ["first", "second"], () =>
        h.store.reservePreparedRun(preparedRun("second")),
      );
      expect(evidence).toEqual({ kind: "session_busy", sessionId: SESSION, activeRunId: "first" });
      expect(h.store.getRun("second")).toBeNull();
      expect(h.store.listRunEvents("second")).toEqual([]);
      expect(h.store.findSessionReservation(SESSION)?.runId).toBe("first");
    },
  );

  it("keeps different Pi sessions independent", () => {
    saved(h.store.reservePreparedRun(preparedRun("one", { origin: { kind: "pi", sessionId: "s-a" } })));
    const two = h.store.reservePreparedRun(preparedRun("two", { origin: { kind: "pi", sessionId: "s-b" } }));
    expect(two.kind).toBe("applied");
    expect(h.store.findSessionReservation("s-a")?.runId).toBe("one");
    expect(h.store.findSessionReservation("s-b")?.runId).toBe("two");
  });

  it("never reserves a session for CLI runs", () => {
    const cli = { origin: { kind: "cli" as const } };
    expect(h.store.reservePreparedRun(preparedRun("cli-1", cli)).kind).toBe("applied");
    expect(h.store.reservePreparedRun(preparedRun("cli-2", cli)).kind).toBe("applied");
    // A stray session ID on a CLI origin is not part of the origin and reserves nothing.
    const stray = { ...preparedRun("cli-3"), origin: { kind: "cli" as const, sessionId: SESSION } };
    expect(h.store.reservePreparedRun(stray).kind).toBe("applied");
    expect(getRun(h.store, "cli-3").origin).toEqual({ kind: "cli" });
    expect(getRun(h.store, "cli-1").origin).toEqual({ kind: "cli" });
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    expect(h.store.reservePreparedRun(preparedRun("pi-1")).kind).toBe("applied");
    expect(h.store.findSessionReservation(SESSION)?.runId).toBe("pi-1");
  });

  it.each<[string, (store: RunStore) => void]>([
    [
      "a launch failure (starting -> failed)",
      (store) => {
        const { fence } = startingRun(store, "first");
        saved(
          store.finishRun(fence, {
            outcome: "failed",
            error: { code: "source_changed", message: "The file changed." },
          }),
        );
      },
    ],
    [
      "a run failure (running -> failed)",
      (store) => {
        const fence = runningRun(store, "first");
        saved(store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "x" } }));
      },
    ],
    ["a cancel while queued", (store) => void saved(store.reservePreparedRun(preparedRun("first")))],
    ["a cancel while starting", (store) => void startingRun(store, "first")],
    ["a cancel while running", (store) => void runningRun(store, "first")],
  ])("releases the reservation after %s so a new reserve works", (_what, setup) => {
    setup(h.store);
    if (getRun(h.store, "first").status !== "failed") saved(h.store.cancelRun({ runId: "first" }));
    expect(["failed", "cancelled"]).toContain(getRun(h.store, "first").status);
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    const second = h.store.reservePreparedRun(preparedRun("second"));
    expect(second.kind).toBe("applied");
    expect(h.store.findSessionReservation(SESSION)?.runId).toBe("second");
  });

  it.each<[string, unknown]>([
    ["a run ID with spaces", preparedRun("bad id")],
    ["an empty workflow name", preparedRun("demo-1", { workflowName: "" })],
    ["a malformed sha256", preparedRun("demo-1", { source: { kind: "file", path: "/x", sha256: "nope" } })],
    ["an unknown origin kind", { ...preparedRun("demo-1"), origin: { kind: "web" } }],
    ["a missing input", { ...preparedRun("demo-1"), input: undefined }],
    ["no object at all", "demo-1"],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, req) => {
    expectRefusedBySchema(reservePreparedRunSchema, req);
  });
});

describe("claimRun", () => {
  it("moves queued -> starting and issues a start command fenced by the new generation", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const t = h.store.claimRun({ runId: "demo-1", claimToken: "tok-1", leaseMs: LEASE_MS });
    expect(t).toEqual({
      kind: "applied",
      value: { command: { type: "start", runId: "demo-1", generation: 1, claimToken: "tok-1" }, revision: 2 },
    });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "starting",
      generation: 1,
      claimed: true,
      revision: 2,
      leaseExpiresAt: h.clock.now + LEASE_MS,
    });
    expect(lastEvent(h.store, "demo-1")?.type).toBe("run.claimed");
  });

  it("adopts a repeated claim with the same token and changes nothing", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const first = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-1", leaseMs: LEASE_MS }));
    const again = unchanged(h.store, ["demo-1"], () =>
      h.store.claimRun({ runId: "demo-1", claimToken: "tok-1", leaseMs: LEASE_MS }),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("refuses a claim with another token while the first claim is live, and the first keeps working", () => {
    const { fence } = startingRun(h.store, "demo-1", {}, "tok-1");
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }),
    );
    expect(evidence).toEqual({
      kind: "invalid_transition",
      runId: "demo-1",
      from: "starting",
      to: "starting",
    });
    expect(h.store.markRunning(fence).kind).toBe("applied");
  });

  it("issues continue and restart commands for child runs", () => {
    waitingParent(h.store, "parent");
    const answer = { approved: true, notes: ["ok"] };
    saved(
      h.store.prepareContinuation({
        answerer: "human",
        runId: "cont",
        parentRunId: "parent",
        accepted: { path: "review", visit: 1, answer },
      }),
    );
    const cont = saved(h.store.claimRun({ runId: "cont", claimToken: "tok-c", leaseMs: LEASE_MS }));
    expect(cont.command).toEqual({
      type: "continue",
      runId: "cont",
      generation: 1,
      claimToken: "tok-c",
      parentRunId: "parent",
      accepted: { path: "review", visit: 1, answer },
    });
    saved(h.store.cancelRun({ runId: "cont" }));
    saved(h.store.prepareRestart({ runId: "again", parentRunId: "cont" }));
    const restart = saved(h.store.claimRun({ runId: "again", claimToken: "tok-r", leaseMs: LEASE_MS }));
    expect(restart.command).toEqual({
      type: "restart",
      runId: "again",
      generation: 1,
      claimToken: "tok-r",
      parentRunId: "cont",
      restartNumber: 1,
    });
  });

  it("resumes a parked run (parked -> starting) and clears its pause and recovery reason", () => {
    pausedRun(h.store, "demo-1");
    const parked = getRun(h.store, "demo-1");
    expect(flatRun(parked)).toMatchObject({
      status: "parked",
      paused: true,
      recoveryReason: { code: "paused" },
    });
    const t = h.store.claimRun({ runId: "demo-1", claimToken: "tok-resume", leaseMs: LEASE_MS });
    expect(t.kind).toBe("applied");
    expect(saved(t).command).toEqual({
      type: "resume",
      runId: "demo-1",
      generation: parked.generation + 1,
      claimToken: "tok-resume",
    });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "starting",
      paused: false,
      recoveryReason: null,
      claimed: true,
    });
  });

  it("clears a worker recovery reason on resume too", () => {
    const fence = runningRun(h.store, "demo-1");
    saved(h.store.parkRun(fence, WORKER_LOST));
    expect(getRun(h.store, "demo-1")).toHaveProperty("recoveryReason", WORKER_LOST);
    saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({ recoveryReason: null, paused: false });
  });

  it("refuses to resume a parked run while another run holds its session (session_busy)", () => {
    pausedRun(h.store, "parked-run");
    // A parked run holds no reservation, so a new run may take the session meanwhile.
    saved(h.store.reservePreparedRun(preparedRun("newer")));
    const evidence = refusedWithoutChange(h.store, ["parked-run", "newer"], () =>
      h.store.claimRun({ runId: "parked-run", claimToken: "tok-2", leaseMs: LEASE_MS }),
    );
    expect(evidence).toEqual({ kind: "session_busy", sessionId: SESSION, activeRunId: "newer" });
    saved(h.store.cancelRun({ runId: "newer" }));
    expect(h.store.claimRun({ runId: "parked-run", claimToken: "tok-2", leaseMs: LEASE_MS }).kind).toBe(
      "applied",
    );
  });

  it("refuses a stale expectedRevision (revision_mismatch) and accepts the current one", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.claimRun({ runId: "demo-1", claimToken: "tok", leaseMs: LEASE_MS, expectedRevision: 7 }),
    );
    expect(evidence).toEqual({ kind: "revision_mismatch", runId: "demo-1", expected: 7, actual: 1 });
    const t = h.store.claimRun({
      runId: "demo-1",
      claimToken: "tok",
      leaseMs: LEASE_MS,
      expectedRevision: 1,
    });
    expect(t.kind).toBe("applied");
  });

  it.each(["running", "done", "failed", "cancelled"] as const)("refuses to claim a %s run", (status) => {
    const fence = runningRun(h.store, "demo-1");
    if (status === "done") saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }));
    if (status === "failed")
      saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "x" } }));
    if (status === "cancelled") saved(h.store.cancelRun({ runId: "demo-1" }));
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.claimRun({ runId: "demo-1", claimToken: "tok-new", leaseMs: LEASE_MS }),
    );
    expect(evidence).toEqual({ kind: "invalid_transition", runId: "demo-1", from: status, to: "starting" });
  });

  it("returns not_found for an unknown run", () => {
    const t = h.store.claimRun({ runId: "nope", claimToken: "tok", leaseMs: LEASE_MS });
    expect(refused(t)).toEqual({ kind: "not_found", resource: "run", id: "nope" });
    expect(h.store.getRun("nope")).toBeNull();
  });
});

describe("markRunning", () => {
  it("moves starting -> running, releases the lease and makes every later activation a resume", () => {
    const { fence } = startingRun(h.store, "demo-1");
    h.clock.now += 1_234;
    const t = h.store.markRunning(fence);
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "running",
      nextCommand: "resume",
      leaseExpiresAt: null,
      claimed: true,
      generation: fence.generation,
      startedAt: h.clock.now,
      revision: 3,
    });
    expect(lastEvent(h.store, "demo-1")?.type).toBe("run.running");
  });

  it("adopts a repeat with the same fence", () => {
    const { fence } = startingRun(h.store, "demo-1");
    const first = saved(h.store.markRunning(fence));
    const again = unchanged(h.store, ["demo-1"], () => h.store.markRunning(fence));
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("keeps the first start time when a resumed run runs again", () => {
    pausedRun(h.store, "demo-1");
    const startedAt = getRun(h.store, "demo-1").startedAt;
    expect(startedAt).toBe(h.clock.now);
    h.clock.now += 60_000;
    const claim = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    saved(
      h.store.markRunning({ runId: "demo-1", generation: claim.command.generation, claimToken: "tok-2" }),
    );
    expect(getRun(h.store, "demo-1")).toMatchObject({ status: "running", startedAt });
  });

  it("refuses a fence with another token or generation (stale_fence)", () => {
    const { fence } = startingRun(h.store, "demo-1");
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () => h.store.markRunning({ ...fence, claimToken: "other" })),
    ).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation,
      status: "starting",
    });
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () => h.store.markRunning({ ...fence, generation: 0 })),
    ).toMatchObject({ kind: "stale_fence", expectedGeneration: 0, actualGeneration: 1 });
  });

  it("refuses a stale expectedRevision", () => {
    const { fence, revision } = startingRun(h.store, "demo-1");
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.markRunning({ ...fence, expectedRevision: revision - 1 }),
    );
    expect(evidence).toEqual({ kind: "revision_mismatch", runId: "demo-1", expected: 1, actual: 2 });
    expect(h.store.markRunning({ ...fence, expectedRevision: revision }).kind).toBe("applied");
  });

  it("returns not_found for an unknown run, and a conflict for a fence of no claim", () => {
    expect(refused(h.store.markRunning({ runId: "nope", generation: 1, claimToken: "t" }))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "nope",
    });
    const { fence } = startingRun(h.store, "demo-1");
    // The fence is the host's own; a malformed one can only be a host bug, and it matches no claim.
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () => h.store.markRunning({ ...fence, generation: -1 })).kind,
    ).toBe("stale_fence");
  });
});

describe("finishRun", () => {
  it("completes a running run: done/completed with its output, claim released, session freed", () => {
    const fence = runningRun(h.store, "demo-1");
    const before = getRun(h.store, "demo-1");
    h.clock.now += 10;
    const t = h.store.finishRun(fence, { outcome: "completed", output: { answer: 42 } });
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "done",
      outcome: "completed",
      claimed: false,
      generation: before.generation + 1,
      revision: before.revision + 1,
      errorCode: null,
      presentationState: "pending",
      finishedAt: h.clock.now,
    });
    expect(endedRun(saved(t)).terminalFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(h.store.readRunFinalOutput("demo-1")).toEqual({ answer: 42 });
    expect(h.store.readRunError("demo-1")).toBeNull();
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    expect(lastEvent(h.store, "demo-1")?.type).toBe("run.completed");
  });

  it("saves a waiting ending with its checkpoint as the cursor", () => {
    const fence = runningRun(h.store, "demo-1");
    const checkpoint = { path: "plan/review", visit: 2, prompt: "Approve?" };
    const record = saved(
      h.store.finishRun(fence, {
        outcome: "waiting",
        checkpoint,
        answerCheck: { kind: "worker_only", reason: "not checked in this test" },
      }),
    );
    expect(flatRun(record)).toMatchObject({
      status: "done",
      outcome: "waiting",
      cursor: { path: "plan/review", visit: 2 },
    });
    expect(h.store.readTerminalFacts("demo-1")).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "waiting", checkpoint } },
    });
  });

  it.each([
    ["failed", "node_failed"],
    ["timed_out", "node_timed_out"],
  ] as const)("saves a %s ending as status failed with its typed error", (outcome, code) => {
    const fence = runningRun(h.store, "demo-1");
    const record = saved(h.store.finishRun(fence, { outcome, error: { code, message: "It broke." } }));
    expect(flatRun(record)).toMatchObject({ status: "failed", outcome, errorCode: code, claimed: false });
    expect(h.store.readRunError("demo-1")).toEqual({ code, message: "It broke." });
    expect(h.store.readRunFinalOutput("demo-1")).toBeNull();
    expect(lastEvent(h.store, "demo-1")).toMatchObject({ type: `run.${outcome}`, data: { code } });
  });

  it("creates nothing to present for a CLI run", () => {
    const fence = runningRun(h.store, "cli-1", { origin: { kind: "cli" } });
    expect(saved(h.store.finishRun(fence, { outcome: "completed", output: null }))).toHaveProperty(
      "presentationState",
      "none",
    );
  });

  it("lets a starting run fail (a deferred launch failure)", () => {
    const { fence } = startingRun(h.store, "demo-1");
    const t = h.store.finishRun(fence, {
      outcome: "failed",
      error: { code: "workflow_not_found", message: "demo.workflow.ts is gone." },
    });
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "failed",
      outcome: "failed",
      errorCode: "workflow_not_found",
    });
    expect(h.store.readTerminalFacts("demo-1")).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "failed", duringLaunch: true } },
    });
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
  });

  it.each([
    ["completed", { outcome: "completed", output: 1 }],
    [
      "waiting",
      {
        outcome: "waiting",
        checkpoint: { path: "a", visit: 1, prompt: "?" },
        answerCheck: { kind: "worker_only", reason: "not checked in this test" },
      },
    ],
  ] as const)("refuses to end a starting run as %s", (_what, ending) => {
    const { fence } = startingRun(h.store, "demo-1");
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () => h.store.finishRun(fence, ending));
    expect(evidence).toEqual({ kind: "invalid_transition", runId: "demo-1", from: "starting", to: "done" });
  });

  it("adopts an identical repeat from the same worker and changes nothing", () => {
    const fence = runningRun(h.store, "demo-1");
    const first = saved(h.store.finishRun(fence, { outcome: "completed", output: { b: 2, a: 1 } }));
    const again = unchanged(h.store, ["demo-1"], () =>
      h.store.finishRun(fence, { outcome: "completed", output: { a: 1, b: 2 } }),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("adopts an identical failed repeat", () => {
    const fence = runningRun(h.store, "demo-1");
    const ending = { outcome: "failed", error: { code: "node_failed", message: "x" } } as const;
    saved(h.store.finishRun(fence, ending));
    expect(unchanged(h.store, ["demo-1"], () => h.store.finishRun(fence, ending)).kind).toBe("adopted");
  });

  it("refuses a different ending from the same worker once the run is terminal (stale fence)", () => {
    const fence = runningRun(h.store, "demo-1");
    saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }));
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.finishRun(fence, { outcome: "completed", output: 2 }),
    );
    expect(evidence).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation + 1,
      status: "done",
    });
    expect(h.store.readRunFinalOutput("demo-1")).toBe(1);
    expect(
      refused(
        h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "late" } }),
      ),
    ).toMatchObject({ kind: "stale_fence", status: "done" });
    expect(getRun(h.store, "demo-1")).toHaveProperty("outcome", "completed");
  });

  it("refuses a worker whose claim was superseded (stale_fence) and keeps the new claim intact", () => {
    const { fence: old } = startingRun(h.store, "demo-1", {}, "tok-old");
    h.clock.now += LEASE_MS + 1;
    saved(h.store.recoverExpiredStarting({ runId: "demo-1" }));
    saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-new", leaseMs: LEASE_MS }));
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.finishRun(old, { outcome: "failed", error: { code: "activation_failed", message: "x" } }),
    );
    expect(evidence).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: 1,
      actualGeneration: 3,
      status: "starting",
    });
  });

  it("refuses a stale expectedRevision", () => {
    const fence = runningRun(h.store, "demo-1");
    const actual = getRun(h.store, "demo-1").revision;
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.finishRun({ ...fence, expectedRevision: actual + 5 }, { outcome: "completed", output: 1 }),
    );
    expect(evidence).toEqual({ kind: "revision_mismatch", runId: "demo-1", expected: actual + 5, actual });
  });

  it("ends open turns as lost, cancels pending step prompts, keeps notifications and releases the claim in the one transition", () => {
    const fence = runningRun(h.store, "demo-1");
    saved(h.store.startNodeVisit(fence, { path: "ask", visit: 1, nodeKind: "agent" }));
    saved(
      h.store.enqueueMessage(fence, {
        messageId: "m-step",
        kind: "step_prompt",
        path: "ask",
        visit: 1,
        body: "Do the step.",
        triggerTurn: true,
      }),
    );
    expect(
      saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "pi", leaseMs: 10_000 })),
    ).toHaveLength(1);
    saved(
      h.store.enqueueMessage(fence, {
        messageId: "m-note",
        kind: "notify",
        path: "ask",
        visit: 1,
        body: "FYI.",
        triggerTurn: false,
      }),
    );
    const turn = saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: "m-step" }));
    expect(turn).toMatchObject({ owner: "workflow", turn: { status: "open", runId: "demo-1" } });
    expect(
      Object.fromEntries(h.store.listSessionMessages(SESSION).map((m) => [m.messageId, m.status])),
    ).toEqual({
      "m-step": "claimed",
      "m-note": "pending",
    });

    const before = snapshot(h.store, "demo-1");
    saved(h.store.finishRun(fence, { outcome: "completed", output: "ok" }));
    const after = snapshot(h.store, "demo-1");
    // One transition: exactly one revision and one trace event.
    expect(after.run?.revision).toBe((before.run?.revision ?? 0) + 1);
    expect(after.events).toBe(before.events + 1);
    expect(flatRun(after.run)).toMatchObject({ status: "done", claimed: false, leaseExpiresAt: null });

    expect(refused(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" }))).toEqual(
      {
        kind: "state_mismatch",
        resource: "turn",
        id: turn.turn.turnId,
        expected: "open",
        actual: "lost",
      },
    );
    // The step prompt asked for work the run no longer takes; the notification tells of work it did,
    // so it stays in the outbox, is claimed after the run's end and delivered once.
    expect(h.store.listSessionMessages(SESSION, ["cancelled"]).map((m) => m.messageId)).toEqual(["m-step"]);
    expect(h.store.listSessionMessages(SESSION).map((m) => [m.messageId, m.status])).toEqual([
      ["m-note", "pending"],
    ]);
    const late = saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "pi-2", leaseMs: 10_000 }));
    expect(late.map((m) => m.messageId)).toEqual(["m-note"]);
    expect(saved(h.store.markMessageDelivered({ messageId: "m-note" })).status).toBe("delivered");
    expect(h.store.listSessionMessages(SESSION)).toEqual([]);
    // A late Pi turn carrying the old step prompt cannot attach to the terminal run.
    const lateTurn = saved(
      h.store.startTurn({ sessionId: SESSION, requestId: "req-2", messageId: "m-step" }),
    );
    expect(lateTurn).toMatchObject({ owner: "none", turn: { status: "unowned", runId: null } });
  });

  it("returns not_found for an unknown run", () => {
    expect(
      refused(
        h.store.finishRun(
          { runId: "nope", generation: 1, claimToken: "t" },
          { outcome: "completed", output: 1 },
        ),
      ),
    ).toEqual({ kind: "not_found", resource: "run", id: "nope" });
  });

  it.each<[string, unknown]>([
    ["an unknown outcome", { outcome: "exploded" }],
    ["an error code outside the enum", { outcome: "failed", error: { code: "oops", message: "x" } }],
    [
      "an oversized error message",
      { outcome: "failed", error: { code: "node_failed", message: "x".repeat(513) } },
    ],
    ["a waiting ending without a checkpoint", { outcome: "waiting" }],
    ["a checkpoint with visit 0", { outcome: "waiting", checkpoint: { path: "a", visit: 0, prompt: "" } }],
  ])("leaves %s to the protocol schema, which refuses it before the store", (_what, ending) => {
    expectRefusedBySchema(runEndingSchema, ending);
  });
});

describe("cancelRun", () => {
  it("cancels a queued run, sends no follow-up and frees the session", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const t = h.store.cancelRun({ runId: "demo-1" });
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "cancelled",
      outcome: "cancelled",
      errorCode: "cancelled",
      claimed: false,
      generation: 1,
      presentationState: "none",
    });
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    expect(h.store.readTerminalFacts("demo-1")).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "cancelled" } },
    });
  });

  it("cancels a starting run and fences out its worker: it can never mark the run running", () => {
    const { fence } = startingRun(h.store, "demo-1");
    expect(flatRun(saved(h.store.cancelRun({ runId: "demo-1" })))).toMatchObject({
      status: "cancelled",
      presentationState: "none",
    });
    expect(refusedWithoutChange(h.store, ["demo-1"], () => h.store.markRunning(fence))).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation + 1,
      status: "cancelled",
    });
    expect(
      refused(h.store.recordWorkerLaunch(fence, { launchId: "l-1", commandType: "start", pid: 1 })),
    ).toMatchObject({ kind: "stale_fence", status: "cancelled" });
  });

  it("cancels a running run: no node can start afterwards and open turns are lost", () => {
    const fence = runningRun(h.store, "demo-1");
    saved(h.store.startNodeVisit(fence, { path: "ask", visit: 1, nodeKind: "agent" }));
    saved(
      h.store.enqueueMessage(fence, {
        messageId: "m-step",
        kind: "step_prompt",
        path: "ask",
        visit: 1,
        body: "Do it.",
        triggerTurn: true,
      }),
    );
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: "m-step" }));
    expect(flatRun(saved(h.store.cancelRun({ runId: "demo-1" })))).toMatchObject({
      status: "cancelled",
      presentationState: "pending",
    });
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () =>
      h.store.startNodeVisit(fence, { path: "next", visit: 1, nodeKind: "compute" }),
    );
    expect(evidence).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation + 1,
      status: "cancelled",
    });
    expect(h.store.listRunSteps("demo-1").map((s) => s.path)).toEqual(["ask"]);
    expect(
      refused(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "aborted" })),
    ).toMatchObject({ kind: "state_mismatch", actual: "lost" });
    expect(h.store.listSessionMessages(SESSION)).toEqual([]);
  });

  it("cancels a parked run", () => {
    pausedRun(h.store, "demo-1");
    expect(flatRun(saved(h.store.cancelRun({ runId: "demo-1" })))).toMatchObject({
      status: "cancelled",
      paused: false,
      recoveryReason: null,
    });
  });

  it("adopts a repeated cancel and changes nothing", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    const first = saved(h.store.cancelRun({ runId: "demo-1" }));
    const again = unchanged(h.store, ["demo-1"], () => h.store.cancelRun({ runId: "demo-1" }));
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it.each(["done", "failed"] as const)("refuses to cancel a %s run (invalid_transition)", (status) => {
    const fence = runningRun(h.store, "demo-1");
    saved(
      h.store.finishRun(
        fence,
        status === "done"
          ? { outcome: "completed", output: 1 }
          : { outcome: "failed", error: { code: "node_failed", message: "x" } },
      ),
    );
    const evidence = refusedWithoutChange(h.store, ["demo-1"], () => h.store.cancelRun({ runId: "demo-1" }));
    expect(evidence).toEqual({ kind: "invalid_transition", runId: "demo-1", from: status, to: "cancelled" });
  });

  it("refuses a stale expectedRevision", () => {
    saved(h.store.reservePreparedRun(preparedRun("demo-1")));
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () =>
        h.store.cancelRun({ runId: "demo-1", expectedRevision: 0 }),
      ),
    ).toEqual({ kind: "revision_mismatch", runId: "demo-1", expected: 0, actual: 1 });
    expect(h.store.cancelRun({ runId: "demo-1", expectedRevision: 1 }).kind).toBe("applied");
  });

  it("returns not_found for an unknown run; a malformed request is left to the protocol schema", () => {
    expect(refused(h.store.cancelRun({ runId: "nope" }))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "nope",
    });
    for (const req of [{}, { runId: "" }]) expectRefusedBySchema(clientMethods["runs.cancel"].params, req);
  });
});

describe("parkRun", () => {
  it("parks a running run with its reason, releases the claim and the session", () => {
    const fence = runningRun(h.store, "demo-1");
    const t = h.store.parkRun(fence, WORKER_LOST);
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "parked",
      recoveryReason: WORKER_LOST,
      paused: false,
      claimed: false,
      generation: fence.generation + 1,
    });
    expect(h.store.findSessionReservation(SESSION)).toBeNull();
    expect(lastEvent(h.store, "demo-1")).toMatchObject({
      type: "run.parked",
      data: { reason: "worker_lost" },
    });
  });

  it("marks a pause reason as paused", () => {
    const fence = runningRun(h.store, "demo-1");
    expect(flatRun(saved(h.store.parkRun(fence, PAUSED)))).toMatchObject({
      paused: true,
      recoveryReason: PAUSED,
    });
  });

  it("adopts an identical repeat and refuses the same worker with another reason", () => {
    const fence = runningRun(h.store, "demo-1");
    const first = saved(h.store.parkRun(fence, PAUSED));
    expect(unchanged(h.store, ["demo-1"], () => h.store.parkRun(fence, PAUSED))).toEqual({
      kind: "adopted",
      value: first,
    });
    expect(refusedWithoutChange(h.store, ["demo-1"], () => h.store.parkRun(fence, WORKER_LOST))).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation + 1,
      status: "parked",
    });
  });

  it("refuses a worker's park of a starting run (only the host's verdict on a lost launch parks it)", () => {
    const { fence } = startingRun(h.store, "demo-1");
    expect(refusedWithoutChange(h.store, ["demo-1"], () => h.store.parkRun(fence, PAUSED))).toEqual({
      kind: "invalid_transition",
      runId: "demo-1",
      from: "starting",
      to: "parked",
    });
  });

  it("ends the run's open turns as lost", () => {
    const fence = runningRun(h.store, "demo-1");
    saved(h.store.startNodeVisit(fence, { path: "ask", visit: 1, nodeKind: "agent" }));
    saved(
      h.store.enqueueMessage(fence, {
        messageId: "m-step",
        kind: "step_prompt",
        path: "ask",
        visit: 1,
        body: "Do it.",
        triggerTurn: true,
      }),
    );
    saved(h.store.startTurn({ sessionId: SESSION, requestId: "req-1", messageId: "m-step" }));
    saved(h.store.parkRun(fence, PAUSED));
    expect(
      refused(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" })),
    ).toMatchObject({ kind: "state_mismatch", expected: "open", actual: "lost" });
  });

  it("returns not_found for an unknown run; a malformed reason is left to the protocol schema", () => {
    expect(refused(h.store.parkRun({ runId: "nope", generation: 1, claimToken: "t" }, PAUSED))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "nope",
    });
    for (const reason of [
      { code: "bored", message: "x" },
      { code: "worker_lost", message: "no launch" },
      null,
    ]) {
      expectRefusedBySchema(recoveryReasonSchema, reason);
    }
  });
});

describe("requestPause", () => {
  it("flags a running run, which then parks at the next node boundary (recoveryRequired: paused)", () => {
    const fence = runningRun(h.store, "demo-1");
    const t = h.store.requestPause({ runId: "demo-1" });
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({ status: "running", paused: true, claimed: true });
    const visit = h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" });
    expect(visit).toEqual({
      kind: "recoveryRequired",
      reason: { code: "paused", message: expect.any(String) },
    });
    expect(flatRun(getRun(h.store, "demo-1"))).toMatchObject({
      status: "parked",
      paused: true,
      claimed: false,
      recoveryReason: { code: "paused" },
      generation: fence.generation + 1,
    });
    expect(h.store.listRunSteps("demo-1")).toEqual([]);
    expect(
      refused(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" })),
    ).toMatchObject({
      kind: "stale_fence",
      status: "parked",
    });
  });

  it("adopts a repeated pause request", () => {
    runningRun(h.store, "demo-1");
    const first = saved(h.store.requestPause({ runId: "demo-1" }));
    expect(unchanged(h.store, ["demo-1"], () => h.store.requestPause({ runId: "demo-1" }))).toEqual({
      kind: "adopted",
      value: first,
    });
  });

  it("accepts a pause while starting; the run parks at its first node", () => {
    const { fence } = startingRun(h.store, "demo-1");
    saved(h.store.requestPause({ runId: "demo-1" }));
    saved(h.store.markRunning(fence));
    expect(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }).kind).toBe(
      "recoveryRequired",
    );
    expect(getRun(h.store, "demo-1").status).toBe("parked");
  });

  it.each(["queued", "done", "cancelled"] as const)(
    "refuses to pause a %s run (state_mismatch)",
    (status) => {
      if (status === "queued") saved(h.store.reservePreparedRun(preparedRun("demo-1")));
      else {
        const fence = runningRun(h.store, "demo-1");
        if (status === "done") saved(h.store.finishRun(fence, { outcome: "completed", output: 1 }));
        else saved(h.store.cancelRun({ runId: "demo-1" }));
      }
      expect(
        refusedWithoutChange(h.store, ["demo-1"], () => h.store.requestPause({ runId: "demo-1" })),
      ).toEqual({
        kind: "state_mismatch",
        resource: "run",
        id: "demo-1",
        expected: "running",
        actual: status,
      });
    },
  );

  it("returns not_found for an unknown run; a malformed run ID is left to the protocol schema", () => {
    expect(refused(h.store.requestPause({ runId: "nope" }))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "nope",
    });
    expectRefusedBySchema(clientMethods["runs.pause"].params, { runId: "../etc" });
  });
});

describe("recoverExpiredStarting", () => {
  it("refuses while the lease is live and changes nothing", () => {
    startingRun(h.store, "demo-1");
    h.clock.now += LEASE_MS - 1;
    expect(
      refusedWithoutChange(h.store, ["demo-1"], () => h.store.recoverExpiredStarting({ runId: "demo-1" })),
    ).toEqual({
      kind: "state_mismatch",
      resource: "run",
      id: "demo-1",
      expected: "lease expired",
      actual: "lease live",
    });
  });

  it("returns an expired start to queued, fences out the old worker, and the next claim starts again", () => {
    const { fence, command } = startingRun(h.store, "demo-1", {}, "tok-old");
    h.clock.now += LEASE_MS;
    const t = h.store.recoverExpiredStarting({ runId: "demo-1" });
    expect(t.kind).toBe("applied");
    expect(flatRun(saved(t))).toMatchObject({
      status: "queued",
      claimed: false,
      leaseExpiresAt: null,
      generation: fence.generation + 1,
      nextCommand: "start",
    });
    expect(lastEvent(h.store, "demo-1")?.type).toBe("run.lease_expired");
    // Still queued, so the session stays reserved.
    expect(h.store.findSessionReservation(SESSION)?.runId).toBe("demo-1");
    expect(refusedWithoutChange(h.store, ["demo-1"], () => h.store.markRunning(fence))).toEqual({
      kind: "stale_fence",
      runId: "demo-1",
      expectedGeneration: fence.generation,
      actualGeneration: fence.generation + 1,
      status: "queued",
    });
    const next = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-new", leaseMs: LEASE_MS }));
    expect(next.command).toEqual({ ...command, generation: fence.generation + 2, claimToken: "tok-new" });
    expect(h.store.markRunning(fence).kind).toBe("conflict");
  });

  it("parks an expired resume with its reason instead of queueing it, and one resume claims it again", () => {
    pausedRun(h.store, "demo-1");
    saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-1", leaseMs: LEASE_MS }));
    h.clock.now += LEASE_MS + 1;
    expect(flatRun(saved(h.store.recoverExpiredStarting({ runId: "demo-1" })))).toMatchObject({
      status: "parked",
      claimed: false,
      errorCode: null,
      recoveryReason: { code: "worker_lost_no_progress" },
    });
    expect(lastEvent(h.store, "demo-1")).toMatchObject({ type: "run.parked" });
    const next = saved(h.store.claimRun({ runId: "demo-1", claimToken: "tok-2", leaseMs: LEASE_MS }));
    expect(next.command.type).toBe("resume");
  });

  it.each(["queued", "running", "parked", "done"] as const)(
    "refuses a %s run (invalid_transition)",
    (status) => {
      if (status === "queued") saved(h.store.reservePreparedRun(preparedRun("demo-1")));
      if (status === "running") runningRun(h.store, "demo-1");
      if (status === "parked") pausedRun(h.store, "demo-1");
      if (status === "done")
        saved(h.store.finishRun(runningRun(h.store, "demo-1"), { outcome: "completed", output: 1 }));
      h.clock.now += 10 * LEASE_MS;
      expect(
        refusedWithoutChange(h.store, ["demo-1"], () => h.store.recoverExpiredStarting({ runId: "demo-1" })),
      ).toEqual({ kind: "invalid_transition", runId: "demo-1", from: status, to: "queued" });
    },
  );

  it("returns not_found for an unknown run", () => {
    expect(refused(h.store.recoverExpiredStarting({ runId: "nope" }))).toEqual({
      kind: "not_found",
      resource: "run",
      id: "nope",
    });
  });
});

// Status-table rule: only RUN_TRANSITIONS edges exist. Put a run in each status and try every operation
// that would move it to each other status.
describe("the run transition table", () => {
  const STATUSES = Object.keys(RUN_TRANSITIONS) as RunStatus[];
  const TOKEN = "tok-table";

  interface Placed {
    runId: string;
    fence: Fence;
  }

  function place(store: RunStore, status: RunStatus): Placed {
    const runId = `table-${status}`;
    if (status === "queued") {
      saved(store.reservePreparedRun(preparedRun(runId)));
      return { runId, fence: { runId, generation: 0, claimToken: TOKEN } };
    }
    if (status === "starting") return { runId, fence: startingRun(store, runId, {}, TOKEN).fence };
    const running = startingRun(store, runId, {}, TOKEN).fence;
    saved(store.markRunning(running));
    if (status === "parked") saved(store.parkRun(running, PAUSED));
    if (status === "done") saved(store.finishRun(running, { outcome: "completed", output: 1 }));
    if (status === "failed")
      saved(store.finishRun(running, { outcome: "failed", error: { code: "node_failed", message: "x" } }));
    if (status === "cancelled") saved(store.cancelRun({ runId }));
    expect(getRun(store, runId).status).toBe(status);
    // The strongest fence a worker could present: its own token at the run's current generation.
    return { runId, fence: currentFence(store, running) };
  }

  function attempt(to: RunStatus, { runId, fence }: Placed): Transition<unknown> {
    switch (to) {
      case "queued":
        h.clock.now += 2 * LEASE_MS;
        return h.store.recoverExpiredStarting({ runId });
      case "starting":
        return h.store.claimRun({ runId, claimToken: "tok-next", leaseMs: LEASE_MS });
      case "running":
        return h.store.markRunning(fence);
      case "parked":
        // A starting run parks only through the host's verdict on its lost worker; a worker parks a running one.
        if (getRun(h.store, runId).status === "starting") {
          saved(h.store.recordWorkerLaunch(fence, { launchId: `L-${runId}`, commandType: "start", pid: 1 }));
          return h.store.recordWorkerExit({ launchId: `L-${runId}`, exit: { kind: "lost", detail: "x" } });
        }
        return h.store.parkRun(fence, WORKER_LOST);
      case "done":
        return h.store.finishRun(fence, { outcome: "completed", output: 2 });
      case "failed":
        return h.store.finishRun(fence, {
          outcome: "failed",
          error: { code: "worker_failed", message: "y" },
        });
      case "cancelled":
        return h.store.cancelRun({ runId });
    }
  }

  const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));
  const allowed = pairs.filter(([from, to]) => RUN_TRANSITIONS[from].includes(to));
  const forbidden = pairs.filter(([from, to]) => from !== to && !RUN_TRANSITIONS[from].includes(to));
  const same = pairs.filter(([from, to]) => from === to);

  it("has the status table's edges, and starting -> parked for a launch whose worker vanished", () => {
    expect(allowed).toHaveLength(13);
    expect(forbidden).toHaveLength(29);
    expect(RUN_TRANSITIONS.starting).toContain("parked");
  });

  it.each(allowed)("reaches %s -> %s through its operation", (from, to) => {
    const placed = place(h.store, from);
    const t = attempt(to, placed);
    expect(t.kind).toBe("applied");
    expect(getRun(h.store, placed.runId).status).toBe(to);
  });

  it.each(forbidden)("refuses %s -> %s and changes nothing", (from, to) => {
    const placed = place(h.store, from);
    const evidence = refusedWithoutChange(h.store, [placed.runId], () => attempt(to, placed));
    expect(["invalid_transition", "stale_fence"]).toContain(evidence.kind);
    if (evidence.kind === "invalid_transition") expect(evidence).toMatchObject({ from, to });
    if (evidence.kind === "stale_fence") expect(evidence.status).toBe(from);
    expect(getRun(h.store, placed.runId).status).toBe(from);
  });

  it.each(same)(
    "never re-enters %s -> %s: the operation is refused or adopted without change",
    (from, to) => {
      const placed = place(h.store, from);
      const t = unchanged(h.store, [placed.runId], () => attempt(to, placed));
      expect(["conflict", "adopted"]).toContain(t.kind);
    },
  );
});
