import { afterEach, describe, expect, it } from "vitest";
import { example, type Harness, openRuntime } from "./harness.js";

let h: Harness;
afterEach(() => h.cleanup());

describe("the examples, run against the real store", () => {
  it("hello: compute then shell", async () => {
    h = openRuntime();
    const loaded = await example("hello");
    const { runId, outcome } = await h.runtime.run({
      workflow: loaded.workflow,
      source: loaded.source,
      input: { task: "say hi" },
    });
    expect(outcome).toEqual({ kind: "completed", output: { said: "hello from piw: say hi" } });
    expect(h.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([
      ["greet", "succeeded"],
      ["echo", "succeeded"],
    ]);
  });

  it("flaky-tests: a real test failure routes to the fix step, and the tests pass after it", async () => {
    h = openRuntime();
    const loaded = await example("flaky-tests");
    const { runId, outcome } = await h.runtime.run({
      workflow: loaded.workflow,
      source: loaded.source,
      input: null,
    });
    expect(outcome).toEqual({
      kind: "completed",
      output: {
        passed: true,
        fixRounds: 1,
        lastFix: { round: 1, fixedAfter: 1, sawFailure: true },
      },
    });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status, s.nextPath])).toEqual([
      ["prepare", "succeeded", "test"],
      ["test", "failed", "fix"],
      ["fix", "succeeded", "test"],
      ["test", "succeeded", "report"],
      ["report", "succeeded", null],
    ]);
  });

  it("compose: one child mounted twice gets two effect identities", async () => {
    h = openRuntime();
    const loaded = await example("compose");
    const { runId, outcome } = await h.runtime.run({
      workflow: loaded.workflow,
      source: loaded.source,
      input: { repo: "piw" },
    });
    expect(outcome).toEqual({ kind: "completed", output: "workspaces ready for piw" });
    const effects = h.store.listRunEffects(runId);
    expect(effects.map((e) => [e.path, e.status])).toEqual([
      ["code/prepare", "settled"],
      ["docs/prepare", "settled"],
    ]);
    expect(new Set(effects.map((e) => e.effectId)).size).toBe(2);
  });

  it("review-loop: the model drafts, is rejected once, revises, and is approved", async () => {
    h = openRuntime();
    const loaded = await example("review-loop");
    const runId = h.runtime.reserve({
      workflow: loaded.workflow,
      source: loaded.source,
      input: { topic: "durability" },
    });
    const activation = h.runtime.activate(runId);
    const running = h.runtime.execute(activation, loaded.workflow);
    const answers: unknown[] = [
      { text: "first draft" },
      { verdict: "reject", note: "too short" },
      { text: "second, longer draft" },
      { verdict: "approve", note: "good" },
    ];
    for (const output of answers) {
      activation.port.deliverAgentEvent({ type: "submission", output, respond: () => {} });
    }
    expect(await running).toEqual({ kind: "completed", output: "accept" });
    const steps = h.store.listRunSteps(runId).map((s) => `${s.path}#${s.visit}`);
    expect(steps).toEqual(["draft#1", "review#1", "route#1", "draft#2", "review#2", "route#2"]);
    const prompts = h.store.listRunEvents(runId).filter((e) => e.type === "message.queued");
    expect(prompts).toHaveLength(4);
  });

  it("approval: waits at the checkpoint, and the continuation applies the accepted answer", async () => {
    h = openRuntime();
    const loaded = await example("approval");
    const { runId, outcome } = await h.runtime.run({
      workflow: loaded.workflow,
      source: loaded.source,
      input: { change: "bump" },
    });
    expect(outcome).toEqual({ kind: "waiting", path: "approve", visit: 1 });
    const facts = h.store.readTerminalFacts(runId);
    expect(facts).toMatchObject({
      kind: "terminal",
      facts: { run: { outcome: "waiting", checkpoint: { path: "approve" } } },
    });
    const childId = `${runId}-c1`;
    const prepared = h.store.prepareContinuation({
      answerer: "human",
      runId: childId,
      parentRunId: runId,
      accepted: { path: "approve", visit: 1, answer: { approved: true } },
    });
    expect(prepared.kind).toBe("applied");
    const activation = h.runtime.activate(childId);
    expect(activation.command).toMatchObject({ type: "continue", parentRunId: runId });
    const done = await h.runtime.execute(activation, loaded.workflow);
    expect(done).toEqual({
      kind: "completed",
      output: { applied: true, plan: { steps: ["apply bump", "verify"] } },
    });
    expect(h.store.listRunSteps(childId).map((s) => s.path)).toEqual(["apply"]);
  });
});
