import {
  type ActionContext,
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  WorkflowError,
} from "@piw/engine";
import { afterEach, describe, expect, it } from "vitest";
import { abandonAfter, type Harness, openRuntime } from "./harness.js";

let h: Harness;
afterEach(() => h.cleanup());

const source = { kind: "builtin" as const, id: "test", revision: "1" };

/** A workflow whose second node performs one managed effect and then may fail on purpose. */
function effectful(options: {
  mode: "idempotent" | "manual";
  hang: () => boolean;
  failAfter: () => boolean;
  calls: { n: number };
}) {
  return compileWorkflow(
    defineWorkflow({
      name: "effectful",
      startAt: "prepare",
      nodes: {
        prepare: compute({ run: () => "ready" }),
        deploy: action({
          run: async ({ effects }: ActionContext) => {
            const out = await effects[options.mode]("deploy", { env: "prod" }, async () => {
              options.calls.n += 1;
              if (options.hang()) await new Promise(() => {});
              return { deployed: true };
            });
            // A WorkflowError: the author vouches for its message, so it is saved as written.
            if (options.failAfter()) throw new WorkflowError("verification failed");
            return out;
          },
        }),
      },
      edges: { prepare: { to: "deploy" }, deploy: { to: "done" } },
    }),
  );
}

/** What the host does when a worker vanishes after saving progress: park, then resume it. */
function crashAndResume(runId: string, fence: { runId: string; generation: number; claimToken: string }) {
  const parked = h.store.parkRun(fence, { code: "worker_lost", message: "worker died", launchId: "l-1" });
  expect(parked.kind).toBe("applied");
  return h.runtime.activate(runId);
}

describe("durability against the real store", () => {
  it("re-runs an interrupted idempotent effect with the same identity, exactly once more", async () => {
    h = openRuntime();
    const calls = { n: 0 };
    let hang = true;
    const wf = effectful({ mode: "idempotent", hang: () => hang, failAfter: () => false, calls });
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    await abandonAfter(h.runtime.execute(first, wf));
    const [reserved] = h.store.listRunEffects(runId);
    expect(reserved).toMatchObject({ path: "deploy", status: "reserved" });
    hang = false;
    const second = crashAndResume(runId, first.port.fence);
    expect(second.command.type).toBe("resume");
    expect(await h.runtime.execute(second, wf)).toEqual({ kind: "completed", output: { deployed: true } });
    expect(calls.n).toBe(2);
    const effects = h.store.listRunEffects(runId);
    expect(effects).toHaveLength(1);
    expect(effects[0]).toMatchObject({ effectId: reserved?.effectId, status: "settled" });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.visit, s.attempt])).toEqual([
      ["prepare", 1, 1],
      ["deploy", 1, 2],
    ]);
  });

  it("parks a run whose manual effect was interrupted, and does not run it again", async () => {
    h = openRuntime();
    const calls = { n: 0 };
    const wf = effectful({ mode: "manual", hang: () => true, failAfter: () => false, calls });
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    await abandonAfter(h.runtime.execute(first, wf));
    const second = crashAndResume(runId, first.port.fence);
    expect(await h.runtime.execute(second, wf)).toEqual({
      kind: "parked",
      reason: "manual_effect_unsettled",
    });
    expect(calls.n).toBe(1);
    expect(h.store.getRun(runId)).toMatchObject({
      status: "parked",
      recoveryReason: { code: "manual_effect_unsettled" },
    });
  });

  it("restarts a failed run from the first node with no steps, outputs or effects of the parent", async () => {
    h = openRuntime();
    const calls = { n: 0 };
    let failing = true;
    const wf = effectful({ mode: "idempotent", hang: () => false, failAfter: () => failing, calls });
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(h.store.readRunError(runId)?.message).toContain("verification failed");
    failing = false;
    const restartId = `${runId}-r1`;
    expect(h.store.prepareRestart({ runId: restartId, parentRunId: runId }).kind).toBe("applied");
    const snapshot = h.store.readRunSnapshot(restartId);
    expect(snapshot).toMatchObject({ visits: [], carriedOutputs: {}, accepted: null });
    const activation = h.runtime.activate(restartId);
    expect(activation.command).toMatchObject({ type: "restart", parentRunId: runId, restartNumber: 1 });
    expect(await h.runtime.execute(activation, wf)).toEqual({
      kind: "completed",
      output: { deployed: true },
    });
    expect(calls.n).toBe(2);
    expect(h.store.listRunSteps(restartId).map((s) => s.path)).toEqual(["prepare", "deploy"]);
    const facts = h.store.readTerminalFacts(restartId);
    expect(facts).toMatchObject({
      kind: "terminal",
      facts: {
        run: { outcome: "completed" },
        ancestors: [
          { outcome: "failed", error: { message: expect.stringContaining("verification failed") } },
        ],
      },
    });
  });

  it("refuses a command that does not match the saved run before any workflow code runs", async () => {
    h = openRuntime();
    let ran = 0;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "guarded",
        startAt: "a",
        nodes: { a: compute({ run: () => ++ran }) },
        edges: { a: { to: "done" } },
      }),
    );
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const activation = h.runtime.activate(runId);
    const wrong = { ...activation, command: { ...activation.command, type: "resume" as const } };
    const outcome = await h.runtime.execute(wrong, wf);
    // The same outcome as piw-worker's for the same command (packages/worker/test/worker-process.test.ts).
    const error = { code: "activation_failed", message: `Run ${runId} expects a start command, not resume.` };
    expect(outcome).toEqual({ kind: "rejected", error });
    expect(ran).toBe(0);
    expect(h.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "activation_failed" });
    expect(h.store.readRunError(runId)).toEqual(error);
  });

  it("fails a run whose workflow changed since it was prepared, as a launch failure the model can fix", async () => {
    h = openRuntime();
    const before = compileWorkflow(
      defineWorkflow({
        name: "drift",
        startAt: "a",
        nodes: { a: compute({ run: () => 1 }) },
        edges: { a: { to: "done" } },
      }),
    );
    const after = compileWorkflow(
      defineWorkflow({
        name: "drift",
        startAt: "a",
        nodes: { a: compute({ run: () => 1 }), b: compute({ run: () => 2 }) },
        edges: { a: { to: "b" }, b: { to: "done" } },
      }),
    );
    const runId = h.runtime.reserve({
      workflow: before,
      source,
      input: null,
      origin: { kind: "pi", sessionId: "s-1" },
    });
    const outcome = await h.runtime.execute(h.runtime.activate(runId), after);
    // The same outcome as piw-worker's for a changed definition (packages/worker/test/worker-process.test.ts).
    const error = {
      code: "source_changed",
      message: "The definition of workflow drift changed since the run was prepared.",
    };
    expect(outcome).toEqual({ kind: "rejected", error });
    expect(h.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "source_changed" });
    expect(h.store.readRunError(runId)).toEqual(error);
    expect(h.store.findSessionReservation("s-1")).toBeNull();
    const messages = h.store.createTerminalMessages({ runId });
    expect(messages).toMatchObject({
      kind: "applied",
      value: [
        {
          kind: "launch_failure",
          triggerTurn: true,
          body: expect.stringMatching(/^Workflow drift failed to start \(run /),
        },
      ],
    });
  });

  it("fails a node whose output is over the store's blob limit with output_too_large, saving nothing of it", async () => {
    h = openRuntime();
    const wf = compileWorkflow(
      defineWorkflow({
        name: "bulky",
        startAt: "make",
        nodes: {
          make: compute({ run: () => "é".repeat(600_000) }),
          after: compute({ run: () => "ran" }),
        },
        edges: { make: { to: "after" }, after: { to: "done" } },
      }),
    );
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "output_too_large" } });
    expect(h.store.getRun(runId)).toMatchObject({ status: "failed", outcome: "failed" });
    expect(h.store.readRunError(runId)?.code).toBe("output_too_large");
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([["make", "failed"]]);
  });
});
