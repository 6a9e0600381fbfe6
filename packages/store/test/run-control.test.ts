import type { Fence } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  flatRun,
  crashAndRelaunch,
  effectIdFor,
  openHarness,
  preparedRun,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
} from "./fixtures.js";

// "May this run be resumed, answered or cancelled now" is decided here, in the transaction that makes
// the change; the host forwards the request and reports the conflict (packages/host/src/run-control.ts).

const LEASE_MS = 30_000;
const CHECKPOINT = { path: "review", visit: 1, prompt: "Ship it?" };

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function parked(runId: string): Fence {
  const fence = runningRun(h.store, runId);
  saved(h.store.parkRun(fence, { code: "paused", message: "Paused by request." }));
  return fence;
}

function waiting(runId: string): void {
  const fence = runningRun(h.store, runId);
  saved(
    h.store.finishRun(fence, {
      outcome: "waiting",
      checkpoint: CHECKPOINT,
      answerCheck: { kind: "worker_only", reason: "not checked in this test" },
    }),
  );
}

describe("resume", () => {
  it("claims a parked run as an explicit resume", () => {
    parked("r1");
    const claimed = saved(
      h.store.claimRun({ runId: "r1", claimToken: "c2", leaseMs: LEASE_MS, resume: true }),
    );
    expect(claimed.command.type).toBe("resume");
    expect(flatRun(h.store.getRun("r1"))).toMatchObject({ status: "starting", recoveryReason: null });
  });

  it("refuses a run that is not parked, and a missing run, changing nothing", () => {
    saved(h.store.reservePreparedRun(preparedRun("queued-run")));
    expect(
      refusedWithoutChange(h.store, ["queued-run"], () =>
        h.store.claimRun({ runId: "queued-run", claimToken: "c", leaseMs: LEASE_MS, resume: true }),
      ),
    ).toEqual({
      kind: "state_mismatch",
      resource: "run",
      id: "queued-run",
      expected: "parked",
      actual: "queued",
    });
    // The same claim without `resume` is an ordinary activation of a queued run.
    expect(h.store.claimRun({ runId: "queued-run", claimToken: "c", leaseMs: LEASE_MS }).kind).toBe(
      "applied",
    );
    expect(h.store.claimRun({ runId: "nope", claimToken: "c", leaseMs: LEASE_MS, resume: true })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "nope" },
    });
  });

  it("refuses a run parked at an unsettled manual effect until a person settles it", () => {
    const first = runningRun(h.store, "r1");
    saved(h.store.startNodeVisit(first, { path: "deploy", visit: 1, nodeKind: "action" }));
    const effectId = effectIdFor("r1", "deploy", 1, "send_invoice");
    const req = {
      effectId,
      path: "deploy",
      visit: 1,
      effectType: "send_invoice",
      ordinal: 0,
      mode: "manual" as const,
      request: { to: "a" },
    };
    saved(h.store.reserveEffect(first, req));
    const second = crashAndRelaunch(h.store, first, "claim-2");
    saved(h.store.startNodeVisit(second, { path: "deploy", visit: 1, nodeKind: "action" }));
    expect(h.store.reserveEffect(second, req).kind).toBe("recoveryRequired");

    expect(
      refusedWithoutChange(h.store, ["r1"], () =>
        h.store.claimRun({ runId: "r1", claimToken: "c3", leaseMs: LEASE_MS, resume: true }),
      ),
    ).toEqual({
      kind: "state_mismatch",
      resource: "effect",
      id: effectId,
      expected: "settled by a person (piw resume --happened or --not-happened)",
      actual: "reserved and unsettled",
    });
    saved(h.store.resolveManualEffect({ runId: "r1", effectId, happened: false }));
    expect(h.store.claimRun({ runId: "r1", claimToken: "c3", leaseMs: LEASE_MS, resume: true }).kind).toBe(
      "applied",
    );
  });
});

describe("answer", () => {
  it("answers the checkpoint the parent waits at when the request names none", () => {
    waiting("parent");
    const child = saved(
      h.store.prepareContinuation({
        answerer: "human",
        runId: "child",
        parentRunId: "parent",
        accepted: { answer: { ship: true } },
      }),
    );
    expect(child).toMatchObject({ runId: "child", parentRunId: "parent", status: "queued" });
    expect(h.store.readRunSnapshot("child").accepted).toEqual({
      path: CHECKPOINT.path,
      visit: CHECKPOINT.visit,
      answer: { ship: true },
    });
  });

  it("refuses a run that is not waiting, and a missing run, changing nothing", () => {
    parked("busy");
    expect(
      refusedWithoutChange(h.store, ["busy"], () =>
        h.store.prepareContinuation({
          answerer: "human",
          runId: "child",
          parentRunId: "busy",
          accepted: { answer: 1 },
        }),
      ),
    ).toEqual({
      kind: "parent_not_eligible",
      parentRunId: "busy",
      status: "parked",
      outcome: null,
      requires: "waiting",
    });
    expect(h.store.getRun("child")).toBeNull();
    expect(
      h.store.prepareContinuation({
        answerer: "human",
        runId: "child",
        parentRunId: "nope",
        accepted: { answer: 1 },
      }),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run", id: "nope" },
    });
  });
});

describe("cancel", () => {
  it("cancels a run that has not ended and refuses one that has", () => {
    parked("r1");
    expect(h.store.cancelRun({ runId: "r1" })).toMatchObject({
      kind: "applied",
      value: { status: "cancelled" },
    });
    waiting("done-run");
    expect(
      refusedWithoutChange(h.store, ["done-run"], () => h.store.cancelRun({ runId: "done-run" })),
    ).toEqual({
      kind: "invalid_transition",
      runId: "done-run",
      from: "done",
      to: "cancelled",
    });
  });
});
