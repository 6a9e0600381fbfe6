import { AGENT_SESSION_EFFECT, type Fence } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimRunning, effectIdFor, openHarness, runningRun, type StoreHarness, saved } from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUN = "budget-1";
const SESSION = "session-1";

/** Open an agent visit and start its Pi turn, as the worker, the host and the extension do. */
function openTurn(fence: Fence, requestId: string, path = "review", n = 1): void {
  if (n === 1) saved(h.store.startNodeVisit(fence, { path, visit: 1, nodeKind: "agent" }));
  const messageId = `msg:${fence.runId}:${path}:1:step_prompt${n === 1 ? "" : `:${n}`}`;
  saved(
    h.store.enqueueMessage(fence, {
      messageId,
      kind: "step_prompt",
      path,
      visit: 1,
      body: "Review it.",
      triggerTurn: true,
    }),
  );
  saved(h.store.claimMessages({ sessionId: SESSION, claimToken: "deliverer", leaseMs: 10_000 }));
  saved(h.store.markMessageDelivered({ messageId }));
  saved(h.store.startTurn({ sessionId: SESSION, requestId, messageId }));
}

/** An isolated session's record, saved as its visit's `agent.session` effect. */
function isolatedRecord(
  fence: Fence,
  path: string,
  usage: { tokensIn: number; tokensOut: number; cost: number | null; turns?: number },
) {
  saved(h.store.startNodeVisit(fence, { path, visit: 1, nodeKind: "agent" }));
  const effectId = effectIdFor(fence.runId, path, 1, AGENT_SESSION_EFFECT);
  saved(
    h.store.reserveEffect(fence, {
      effectId,
      path,
      visit: 1,
      effectType: AGENT_SESSION_EFFECT,
      ordinal: 0,
      mode: "idempotent",
      request: { attempt: 1 },
    }),
  );
  const report = { model: "fake/m", durationMs: 5, transcript: [], transcriptOmitted: 0, ...usage };
  saved(h.store.settleEffect(fence, { effectId, result: { ok: true, value: report } }));
}

describe("a run's spend", () => {
  it("sums its conversation turns' usage, its isolated session records and its workers' time", () => {
    const fence = runningRun(h.store, RUN, { budget: { usd: 1 } });
    openTurn(fence, "req-1");
    saved(h.store.recordTurnUsage({ sessionId: SESSION, requestId: "req-1", tokens: 300, usd: 0.25 }));
    // A late, smaller report of the same turn never lowers what was saved.
    saved(h.store.recordTurnUsage({ sessionId: SESSION, requestId: "req-1", tokens: 100, usd: 0.1 }));
    saved(h.store.endTurn({ sessionId: SESSION, requestId: "req-1", reason: "completed" }));
    isolatedRecord(fence, "check", { tokensIn: 1000, tokensOut: 200, cost: 0.5, turns: 2 });
    const state = h.store.readBudgetState(RUN);
    expect(state?.budget).toEqual({ usd: 1 });
    expect(state?.spend).toMatchObject({ tokens: 1500, usd: 0.75, agentTurns: 3 });
  });

  it("counts execution time only while a worker ran the run, not while it stood parked", () => {
    saved(h.store.reservePreparedRun({ ...preparedCli(), budget: { wallMs: 60_000 } }));
    const launch = (claimToken: string, commandType: "start" | "resume") => {
      const claim = saved(h.store.claimRun({ runId: RUN, claimToken, leaseMs: 30_000 }));
      const fence = { runId: RUN, generation: claim.command.generation, claimToken };
      saved(h.store.recordWorkerLaunch(fence, { launchId: `launch-${claimToken}`, commandType, pid: 4242 }));
      saved(h.store.markRunning(fence));
      return fence;
    };
    const first = launch("c1", "start");
    h.clock.now += 10_000;
    saved(h.store.parkRun(first, { code: "paused", message: "Paused." }));
    saved(h.store.recordWorkerExit({ launchId: "launch-c1", exit: { kind: "reported", phase: "execute" } }));
    // Parked for an hour: none of it counts.
    h.clock.now += 3_600_000;
    launch("c2", "resume");
    h.clock.now += 5_000;
    expect(h.store.readBudgetState(RUN)?.spend.wallMs).toBe(15_000);
  });
});

describe("checkBudget", () => {
  it("answers the spend within the budget, and parks the run with budget_exceeded at a limit", () => {
    const fence = runningRun(h.store, RUN, { budget: { tokens: 1000 } });
    openTurn(fence, "req-1");
    saved(h.store.recordTurnUsage({ sessionId: SESSION, requestId: "req-1", tokens: 600, usd: 0 }));
    const within = h.store.checkBudget(fence, { path: "review", visit: 1, when: "during_turn", pending: {} });
    expect(within).toMatchObject({ kind: "applied", value: { spend: { tokens: 600 } } });
    // Usage an isolated session has not saved yet counts too.
    const over = h.store.checkBudget(fence, {
      path: "review",
      visit: 1,
      when: "during_turn",
      pending: { tokens: 400 },
    });
    expect(over).toMatchObject({
      kind: "recoveryRequired",
      reason: {
        code: "budget_exceeded",
        path: "review",
        limit: "tokens",
        spent: { tokens: 1000 },
        budget: { tokens: 1000 },
      },
    });
    const run = h.store.getRun(RUN);
    expect(run?.status === "parked" && run.recoveryReason.code).toBe("budget_exceeded");
    // The step's visit stays open for the resumed attempt; its turn ended with the park.
    expect(h.store.listRunSteps(RUN).find((s) => s.path === "review")?.status).toBe("running");
    expect(h.store.listOpenTurns(RUN)).toEqual([]);
    // The same worker asking again gets the same answer, not a stale-fence conflict.
    expect(
      h.store.checkBudget(fence, { path: "review", visit: 1, when: "during_turn", pending: {} }),
    ).toEqual(over);
  });

  it("stops a turn from starting once agent turns are used up, but lets the turn under way run", () => {
    const fence = runningRun(h.store, RUN, { budget: { agentTurns: 1 } });
    openTurn(fence, "req-1");
    expect(
      h.store.checkBudget(fence, { path: "review", visit: 1, when: "during_turn", pending: {} }).kind,
    ).toBe("applied");
    expect(
      h.store.checkBudget(fence, { path: "review", visit: 1, when: "before_turn", pending: {} }),
    ).toMatchObject({
      kind: "recoveryRequired",
      reason: { code: "budget_exceeded", limit: "agentTurns", spent: { agentTurns: 1 } },
    });
  });

  it("still saves the record of a parallel branch's session that the budget park stopped, and nothing else", () => {
    const reserve = (fence: Fence, path: string, effectType: string) => {
      saved(h.store.startNodeVisit(fence, { path, visit: 1, nodeKind: "agent" }));
      const effectId = effectIdFor(fence.runId, path, 1, effectType);
      saved(
        h.store.reserveEffect(fence, {
          effectId,
          path,
          visit: 1,
          effectType,
          ordinal: 0,
          mode: "idempotent",
          request: { attempt: 1 },
        }),
      );
      return effectId;
    };
    const report = { model: "fake/m", durationMs: 5, transcript: [], transcriptOmitted: 0, turns: 1 };
    const record = { ok: true as const, value: { ...report, tokensIn: 30, tokensOut: 15, cost: 0 } };
    const fence = runningRun(h.store, RUN, { budget: { tokens: 100 } });
    const other = reserve(fence, "fan/b/b", AGENT_SESSION_EFFECT);
    const action = reserve(fence, "fan/c/c", "deploy");
    // Another branch's live usage reaches the limit: the run parks.
    const parked = h.store.checkBudget(fence, {
      path: "fan/a/a",
      visit: 1,
      when: "during_turn",
      pending: { tokens: 105 },
    });
    expect(parked.kind).toBe("recoveryRequired");
    expect(h.store.settleEffect(fence, { effectId: other, result: record }).kind).toBe("applied");
    expect(h.store.readBudgetState(RUN)?.spend.tokens).toBe(45);
    // Only a session record, and only from the claim that a budget park ended.
    expect(h.store.settleEffect(fence, { effectId: action, result: { ok: true, value: 1 } }).kind).toBe(
      "conflict",
    );
    const paused = runningRun(h.store, "budget-2", { budget: { tokens: 100 } });
    const stopped = reserve(paused, "fan/b/b", AGENT_SESSION_EFFECT);
    saved(h.store.parkRun(paused, { code: "paused", message: "Paused." }));
    expect(h.store.settleEffect(paused, { effectId: stopped, result: record }).kind).toBe("conflict");
  });

  it("never parks a run without a budget", () => {
    const fence = runningRun(h.store, RUN);
    const checked = h.store.checkBudget(fence, {
      path: "review",
      visit: 1,
      when: "before_turn",
      pending: { tokens: 1e9, usd: 1e6 },
    });
    expect(checked).toMatchObject({ kind: "applied", value: { budget: null } });
  });
});

describe("raiseBudget", () => {
  it("puts a resume's limits over the saved ones on a parked run, and the resumed run goes on", () => {
    const fence = runningRun(h.store, RUN, { budget: { tokens: 100, usd: 2 } });
    saved(h.store.checkBudget(fence, { path: "a", visit: 1, when: "before_turn", pending: {} }));
    expect(
      h.store.checkBudget(fence, { path: "a", visit: 1, when: "before_turn", pending: { tokens: 100 } }).kind,
    ).toBe("recoveryRequired");
    const raised = saved(h.store.raiseBudget({ runId: RUN, budget: { tokens: 1000 } }));
    expect(raised.budget).toEqual({ tokens: 1000, usd: 2 });
    expect(h.store.listRunEvents(RUN).at(-1)?.type).toBe("run.budget_raised");
    const resumed = claimRunning(h.store, RUN, "claim-2");
    expect(
      h.store.checkBudget(resumed, { path: "a", visit: 1, when: "before_turn", pending: { tokens: 100 } })
        .kind,
    ).toBe("applied");
  });

  it("refuses to change the budget of a running run", () => {
    runningRun(h.store, RUN, { budget: { tokens: 100 } });
    expect(h.store.raiseBudget({ runId: RUN, budget: { tokens: 1000 } })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", expected: "parked or queued", actual: "running" },
    });
  });
});

function preparedCli() {
  return {
    runId: RUN,
    workflowName: "demo",
    source: { kind: "file" as const, path: "/tmp/demo.workflow.ts", sha256: "a".repeat(64) },
    definitionDigest: "digest-1",
    manifest: { nodes: ["a"] },
    input: { task: "t" },
    origin: { kind: "cli" as const },
  };
}
