import { type ClockReason, type Fence, WAKE_LEAD_MS } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  effectIdFor,
  openHarness,
  refused,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
} from "./fixtures.js";

// The durable clock in the store: a clock park saves the visit's due time and the run's wake-up time;
// the `runs_wake` index answers "what is due" and "when next"; only a due, unpaused run may be woken.

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const cli = { origin: { kind: "cli" } } as const;

function openWait(runId: string, nodeKind: "wait" | "action" = "wait"): Fence {
  const fence = runningRun(h.store, runId, cli);
  saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind, timeoutMs: 1_000 }));
  return fence;
}

function waiting(until: number): ClockReason {
  return { code: "waiting", message: "waiting", path: "a", visit: 1, until };
}

function wake(runId: string, token = "wake") {
  return h.store.claimRun({ runId, claimToken: token, leaseMs: 30_000, wake: true });
}

describe("a wait parks the run on the clock", () => {
  it("saves the due time on the visit and the run, and the index reports it", () => {
    const fence = openWait("w-1");
    const until = h.clock.now + 60_000;
    const parked = saved(h.store.parkRun(fence, waiting(until)));
    expect(parked.status).toBe("parked");
    expect(parked).toHaveProperty("recoveryReason", waiting(until));
    expect(h.store.nextWakeAt()).toBe(until);
    expect(h.store.listDueRuns(h.clock.now)).toEqual([]);
    expect(h.store.listDueRuns(until)).toEqual(["w-1"]);
  });

  it("wakes a run due within the wake lead, but not one due later", () => {
    const early = openWait("w-lead");
    saved(h.store.parkRun(early, waiting(h.clock.now + WAKE_LEAD_MS + 1)));
    const conflict = refusedWithoutChange(h.store, ["w-lead"], () => wake("w-lead"));
    expect(conflict).toMatchObject({ kind: "state_mismatch", actual: "not due yet" });
    h.clock.now += 1;
    expect(saved(wake("w-lead")).command.type).toBe("resume");
  });

  it("refuses to wake a run before its time, and changes nothing", () => {
    const fence = openWait("w-2");
    saved(h.store.parkRun(fence, waiting(h.clock.now + 5_000)));
    const conflict = refusedWithoutChange(h.store, ["w-2"], () => wake("w-2"));
    expect(conflict).toMatchObject({ kind: "state_mismatch", actual: "not due yet" });
  });

  it("wakes a due run with its resume command; the reopened visit carries the saved due time", () => {
    const fence = openWait("w-3");
    const until = h.clock.now + 5_000;
    saved(h.store.parkRun(fence, waiting(until)));
    h.clock.now = until;
    const claim = saved(wake("w-3"));
    expect(claim.command.type).toBe("resume");
    expect(h.store.nextWakeAt()).toBeNull();
    const next = { runId: "w-3", generation: claim.command.generation, claimToken: "wake" };
    saved(h.store.markRunning(next));
    const reopened = saved(h.store.startNodeVisit(next, { path: "a", visit: 1, nodeKind: "wait" }));
    expect(reopened).toMatchObject({ status: "running", attempt: 2, dueAt: until });
  });

  it("a worker the clock launched early and lost puts the run back on the clock, once", () => {
    const fence = openWait("w-lost");
    const until = h.clock.now + 5_000;
    saved(h.store.parkRun(fence, waiting(until)));
    /** The clock wakes the run now; its worker reopens the wait and is lost at `lostAt`. */
    const lose = (launchId: string, lostAt: number) => {
      const claim = saved(wake("w-lost", launchId));
      const next = { runId: "w-lost", generation: claim.command.generation, claimToken: launchId };
      saved(h.store.recordWorkerLaunch(next, { launchId, commandType: "resume", pid: 1 }));
      saved(h.store.markRunning(next));
      saved(h.store.startNodeVisit(next, { path: "a", visit: 1, nodeKind: "wait" }));
      h.clock.now = lostAt;
      return saved(h.store.recordWorkerExit({ launchId, exit: { kind: "lost", detail: "killed" } }));
    };
    // Launched within the lead and killed before the due time: parked, and on the clock again, to be
    // claimed at once (later than any time the host's clock already tried).
    h.clock.now = until - WAKE_LEAD_MS;
    expect(lose("lead-1", until - 1_000).decision).toBe("parked");
    expect(h.store.getRun("w-lost")).toMatchObject({ status: "parked", paused: false });
    expect(h.store.nextWakeAt()).toBe(until - 1_000 + WAKE_LEAD_MS);
    expect(h.store.listDueRuns(h.clock.now + WAKE_LEAD_MS)).toEqual(["w-lost"]);
    // Launched early again, and judged long after the due time (host and worker were killed): the
    // restarted host's clock wakes it at once.
    h.clock.now = until - 500;
    expect(lose("lead-2", until + 60_000).decision).toBe("parked");
    expect(h.store.listDueRuns(h.clock.now + WAKE_LEAD_MS)).toEqual(["w-lost"]);
    // A worker launched after the due time and lost: parked for a person, off the clock.
    expect(lose("lead-3", h.clock.now + 1).decision).toBe("parked");
    expect(h.store.getRun("w-lost")).toHaveProperty("recoveryReason.code", "worker_lost_no_progress");
    expect(h.store.nextWakeAt()).toBeNull();
  });

  it("refuses a clock park of a visit that is not open, and changes nothing", () => {
    const fence = runningRun(h.store, "w-4", cli);
    expect(refusedWithoutChange(h.store, ["w-4"], () => h.store.parkRun(fence, waiting(1)))).toMatchObject({
      kind: "visit_not_open",
    });
  });

  it("a plain resume is never the clock's: a run parked by a person is not due", () => {
    const fence = runningRun(h.store, "w-5", cli);
    saved(h.store.parkRun(fence, { code: "worker_lost_no_progress", message: "Lost." }));
    expect(h.store.nextWakeAt()).toBeNull();
    expect(refused(wake("w-5"))).toMatchObject({ kind: "state_mismatch", actual: "parked" });
  });
});

describe("pause and cancel while a run waits", () => {
  it("a pause takes the run off the clock until an explicit resume, which clears both", () => {
    const fence = openWait("p-1");
    const until = h.clock.now + 5_000;
    saved(h.store.parkRun(fence, waiting(until)));
    const paused = saved(h.store.requestPause({ runId: "p-1" }));
    expect(paused.paused).toBe(true);
    expect(h.store.nextWakeAt()).toBeNull();
    h.clock.now = until + 1;
    expect(h.store.listDueRuns(h.clock.now)).toEqual([]);
    expect(refused(wake("p-1"))).toMatchObject({ kind: "state_mismatch", actual: "paused" });
    const resumed = saved(h.store.claimRun({ runId: "p-1", claimToken: "r", leaseMs: 1_000, resume: true }));
    expect(resumed.command.type).toBe("resume");
    const run = h.store.getRun("p-1");
    expect(run?.paused).toBe(false);
    expect(h.store.nextWakeAt()).toBeNull();
  });

  it("cancel wins over a due wait: the run ends cancelled and leaves the clock", () => {
    const fence = openWait("c-1");
    saved(h.store.parkRun(fence, waiting(h.clock.now + 5_000)));
    h.clock.now += 10_000;
    const cancelled = saved(h.store.cancelRun({ runId: "c-1" }));
    expect(cancelled.status).toBe("cancelled");
    expect(h.store.nextWakeAt()).toBeNull();
    expect(h.store.listDueRuns(h.clock.now)).toEqual([]);
    expect(refused(wake("c-1"))).toMatchObject({ kind: "state_mismatch" });
  });
});

describe("a retry pause", () => {
  it("records the failure count, moves the deadline to the next attempt and drops only failed effects", () => {
    const fence = openWait("r-1", "action");
    const ok = effectIdFor("r-1", "a", 1, "charge", 0);
    const bad = effectIdFor("r-1", "a", 1, "notify", 1);
    const base = { path: "a", visit: 1, mode: "idempotent", request: { n: 1 } } as const;
    saved(h.store.reserveEffect(fence, { ...base, effectId: ok, effectType: "charge", ordinal: 0 }));
    saved(h.store.settleEffect(fence, { effectId: ok, result: { ok: true, value: "paid" } }));
    saved(h.store.reserveEffect(fence, { ...base, effectId: bad, effectType: "notify", ordinal: 1 }));
    const failure = { code: "node_failed", message: "down" } as const;
    saved(h.store.settleEffect(fence, { effectId: bad, result: { ok: false, error: failure } }));
    const at = h.clock.now + 2_000;
    const reason: ClockReason = {
      code: "retry_waiting",
      message: "attempt 2 of 3",
      path: "a",
      visit: 1,
      attempt: 2,
      attempts: 3,
      at,
      lastError: "node_failed",
    };
    saved(h.store.parkRun(fence, reason));
    expect(h.store.listRunEffects("r-1").map((e) => e.effectId)).toEqual([ok]);
    h.clock.now = at;
    const claim = saved(wake("r-1"));
    const next = { runId: "r-1", generation: claim.command.generation, claimToken: "wake" };
    saved(h.store.markRunning(next));
    const reopened = saved(h.store.startNodeVisit(next, { path: "a", visit: 1, nodeKind: "action" }));
    expect(reopened).toMatchObject({
      status: "running",
      dueAt: at,
      failedAttempts: 1,
      deadline: { timeoutMs: 1_000, at: at + 1_000 },
    });
    // The settled effect is adopted; the failed one is reserved afresh and runs again.
    const adopted = h.store.reserveEffect(next, { ...base, effectId: ok, effectType: "charge", ordinal: 0 });
    expect(adopted).toMatchObject({ kind: "adopted", value: { status: "settled" } });
    const again = h.store.reserveEffect(next, { ...base, effectId: bad, effectType: "notify", ordinal: 1 });
    expect(again).toMatchObject({ kind: "applied", value: { status: "reserved" } });
  });
});

describe("the index", () => {
  it("lists due runs earliest first and finds the next time past one already tried", () => {
    for (const [id, offset] of [
      ["i-1", 3_000],
      ["i-2", 1_000],
      ["i-3", 2_000],
    ] as const) {
      saved(h.store.parkRun(openWait(id), waiting(h.clock.now + offset)));
    }
    const t0 = h.clock.now;
    expect(h.store.listDueRuns(t0 + 2_500)).toEqual(["i-2", "i-3"]);
    expect(h.store.listDueRuns(t0 + 5_000, 1)).toEqual(["i-2"]);
    expect(h.store.nextWakeAt()).toBe(t0 + 1_000);
    expect(h.store.nextWakeAt(t0 + 1_000)).toBe(t0 + 2_000);
    expect(h.store.nextWakeAt(t0 + 3_000)).toBeNull();
  });
});
