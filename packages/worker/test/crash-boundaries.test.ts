import type { RunStatus } from "@piw/protocol";
import { CRASH_BOUNDARIES, type CrashBoundary } from "@piw/worker/testing";
import { afterEach, describe, expect, it } from "vitest";
import { lines } from "@piw/test-kit";
import { TestHost } from "./host-harness.js";

let host: TestHost;
afterEach(async () => {
  await host.cleanup();
});

/** prepare -> deploy (one managed effect that appends a line to `counter`) -> report. */
function deployWorkflow(counter: string, mode: "idempotent" | "manual"): string {
  return `import { appendFileSync } from "node:fs";
import { action, compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "deploy",
  startAt: "prepare",
  nodes: {
    prepare: compute({ run: () => "ready" }),
    deploy: action({
      run: ({ effects }) =>
        effects.${mode}("append", { line: "x" }, () => {
          appendFileSync(${JSON.stringify(counter)}, "x\\n");
          return { appended: true };
        }),
    }),
    report: compute({ run: ({ outputs }) => outputs.deploy }),
  },
  edges: { prepare: { to: "deploy" }, deploy: { to: "report" }, report: { to: "done" } },
});
`;
}

async function prepareDeploy(mode: "idempotent" | "manual" = "idempotent") {
  const counter = host.path("counter");
  const runId = await host.prepare(host.writeWorkflow("deploy", deployWorkflow(counter, mode)), null);
  return { runId, counter };
}

interface SavedAtDeath {
  status: RunStatus;
  steps: Array<[string, string]>;
  effects: string[];
  sideEffects: number;
}

/** What must be saved when the worker dies at each boundary, and nothing more. */
const expectedAtDeath: Record<CrashBoundary, SavedAtDeath> = {
  starting: { status: "starting", steps: [], effects: [], sideEffects: 0 },
  "between-nodes": { status: "running", steps: [["prepare", "succeeded"]], effects: [], sideEffects: 0 },
  // prepare's finish and deploy's start are one commit: deploy is open, none of it ran.
  "after-advance": {
    status: "running",
    steps: [
      ["prepare", "succeeded"],
      ["deploy", "running"],
    ],
    effects: [],
    sideEffects: 0,
  },
  "before-effect-reserve": {
    status: "running",
    steps: [
      ["prepare", "succeeded"],
      ["deploy", "running"],
    ],
    effects: [],
    sideEffects: 0,
  },
  "after-effect-reserve": {
    status: "running",
    steps: [
      ["prepare", "succeeded"],
      ["deploy", "running"],
    ],
    effects: ["reserved"],
    sideEffects: 0,
  },
  "after-effect": {
    status: "running",
    steps: [
      ["prepare", "succeeded"],
      ["deploy", "running"],
    ],
    effects: ["reserved"],
    sideEffects: 1,
  },
  "after-effect-settle": {
    status: "running",
    steps: [
      ["prepare", "succeeded"],
      ["deploy", "running"],
    ],
    effects: ["settled"],
    sideEffects: 1,
  },
};

describe("PIW_WORKER_CRASH_AT kills the worker at exactly one durable boundary", () => {
  it.each(CRASH_BOUNDARIES)("%s", async (boundary) => {
    host = new TestHost();
    const { runId, counter } = await prepareDeploy();
    const worker = host.launch(runId, { env: { PIW_WORKER_CRASH_AT: boundary } });
    const exit = await worker.exited;

    expect(exit).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(worker.reports).toEqual([]);
    const saved: SavedAtDeath = {
      status: host.store.getRun(runId)?.status ?? "queued",
      steps: host.store.listRunSteps(runId).map((s) => [s.path, s.status]),
      effects: host.store.listRunEffects(runId).map((e) => e.status),
      sideEffects: lines(counter).length,
    };
    expect(saved).toEqual(expectedAtDeath[boundary]);
  });
});

describe("a relaunch after a crash", () => {
  it("never runs a settled effect again", async () => {
    host = new TestHost();
    const { runId, counter } = await prepareDeploy();
    const first = host.launch(runId, { env: { PIW_WORKER_CRASH_AT: "after-effect-settle" } });
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(host.recordLost(first).decision).toBe("relaunch");

    const second = host.launch(runId);
    expect((await second.exited).code).toBe(0);
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(host.store.readRunFinalOutput(runId)).toEqual({ appended: true });
    expect(lines(counter)).toHaveLength(1);
  });

  it("re-runs an unsettled idempotent effect once, under the same identity", async () => {
    host = new TestHost();
    const { runId, counter } = await prepareDeploy();
    // With the once-file, only the first worker to reach the boundary dies: the same env can relaunch.
    const env = { PIW_WORKER_CRASH_AT: "after-effect", PIW_WORKER_CRASH_ONCE_FILE: host.path("crashed") };
    const first = host.launch(runId, { env });
    expect((await first.exited).signal).toBe("SIGKILL");
    const [reserved] = host.store.listRunEffects(runId);
    expect(host.recordLost(first).decision).toBe("relaunch");

    const second = host.launch(runId, { env });
    expect((await second.exited).code).toBe(0);
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(lines(counter)).toHaveLength(2);
    expect(host.store.listRunEffects(runId)).toEqual([
      expect.objectContaining({ effectId: reserved?.effectId, status: "settled" }),
    ]);
  });

  it("parks a run whose manual effect was reserved but never settled, without running it", async () => {
    host = new TestHost();
    const { runId, counter } = await prepareDeploy("manual");
    const first = host.launch(runId, { env: { PIW_WORKER_CRASH_AT: "after-effect-reserve" } });
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(host.recordLost(first).decision).toBe("relaunch");

    const second = host.launch(runId);
    expect((await second.exited).code).toBe(0);
    expect(second.reports).toEqual([{ kind: "reported", phase: "execute" }]);
    expect(host.store.getRun(runId)).toMatchObject({
      status: "parked",
      recoveryReason: { code: "manual_effect_unsettled" },
    });
    expect(lines(counter)).toHaveLength(0);
  });
});
