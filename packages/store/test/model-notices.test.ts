import type { MessageRecord, ModelNotices, ReservePreparedRun } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openHarness, preparedRun, runningRun, type StoreHarness, saved } from "./fixtures.js";

// Which ends of a run start a follow-up turn for the model that started it (a workflow's
// `notifyModel`, given at reserve only when the model started the run).

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const FOLLOW_UP =
  " You started this run: tell the user what happened; start it again only if the cause is fixed or they ask you to.";
const BOTH: ModelNotices = { onFailure: true, onCancel: true };

function terminal(runId: string): Pick<MessageRecord, "body" | "triggerTurn"> {
  const message = saved(h.store.createTerminalMessages({ runId })).find((m) => m.kind === "terminal");
  if (!message) throw new Error(`no terminal message for ${runId}`);
  return { body: message.body, triggerTurn: message.triggerTurn };
}

function failed(
  runId: string,
  overrides: Partial<ReservePreparedRun>,
  outcome: "failed" | "timed_out" = "failed",
) {
  const fence = runningRun(h.store, runId, overrides);
  saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
  const code = outcome === "failed" ? "node_failed" : "node_timed_out";
  saved(h.store.finishRun(fence, { outcome, error: { code, message: "Compute node a threw an Error." } }));
}

function cancelled(runId: string, overrides: Partial<ReservePreparedRun>, by?: "model" | "human") {
  runningRun(h.store, runId, overrides);
  saved(h.store.cancelRun({ runId, ...(by === undefined ? {} : { by }) }));
}

describe("the model's follow-up turn about a run's end", () => {
  it("tells the model that started a run of its failure or timeout, with the saved error only", () => {
    failed("f1", { notifyModel: BOTH });
    expect(terminal("f1")).toEqual({
      body: `Workflow demo failed (run f1): [node_failed] Compute node a threw an Error.${FOLLOW_UP}`,
      triggerTurn: true,
    });
    failed("t1", { notifyModel: BOTH, origin: { kind: "pi", sessionId: "session-2" } }, "timed_out");
    expect(terminal("t1")).toMatchObject({ triggerTurn: true });
  });

  it("tells it of a cancel by a person, and not of its own cancel", () => {
    cancelled("c1", { notifyModel: BOTH }, "human");
    expect(terminal("c1")).toEqual({
      body: `Workflow demo was cancelled by the user (run c1).${FOLLOW_UP}`,
      triggerTurn: true,
    });
    // A cancel that does not say who asked (piw cancel, an older client) is a person's.
    cancelled("c2", { notifyModel: BOTH, origin: { kind: "pi", sessionId: "session-2" } });
    expect(terminal("c2").triggerTurn).toBe(true);
    cancelled("c3", { notifyModel: BOTH, origin: { kind: "pi", sessionId: "session-3" } }, "model");
    expect(terminal("c3")).toEqual({ body: "Workflow demo was cancelled (run c3).", triggerTurn: false });
  });

  it("starts no turn for a run a person started, or whose workflow turned the notice off", () => {
    failed("p1", {});
    expect(terminal("p1")).toEqual({
      body: "Workflow demo failed (run p1): [node_failed] Compute node a threw an Error.",
      triggerTurn: false,
    });
    cancelled("p2", { origin: { kind: "pi", sessionId: "session-2" } }, "human");
    expect(terminal("p2")).toEqual({ body: "Workflow demo was cancelled (run p2).", triggerTurn: false });
    failed("q1", {
      notifyModel: { onFailure: false, onCancel: true },
      origin: { kind: "pi", sessionId: "session-3" },
    });
    expect(terminal("q1").triggerTurn).toBe(false);
    cancelled("q2", {
      notifyModel: { onFailure: true, onCancel: false },
      origin: { kind: "pi", sessionId: "session-4" },
    });
    expect(terminal("q2").triggerTurn).toBe(false);
  });

  it("keeps the setting through a restart, and adopts a resent start only with the same setting", () => {
    failed("parent", { notifyModel: BOTH });
    saved(h.store.prepareRestart({ runId: "child", parentRunId: "parent" }));
    const claim = saved(h.store.claimRun({ runId: "child", claimToken: "tok", leaseMs: 30_000 }));
    const fence = { runId: "child", generation: claim.command.generation, claimToken: "tok" };
    saved(h.store.markRunning(fence));
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "again" } }));
    expect(terminal("child").triggerTurn).toBe(true);

    const request = preparedRun("keyed", {
      notifyModel: BOTH,
      origin: { kind: "pi", sessionId: "session-9" },
    });
    saved(h.store.reservePreparedRun(request));
    expect(h.store.reservePreparedRun(request).kind).toBe("adopted");
    expect(
      h.store.reservePreparedRun({ ...request, notifyModel: { onFailure: false, onCancel: true } }),
    ).toMatchObject({ kind: "conflict" });
  });
});
