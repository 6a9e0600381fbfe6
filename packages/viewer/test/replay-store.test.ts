import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Fence,
  type GraphManifest,
  type HistoryEvent,
  historyEventSchema,
  type RunRecord,
  runOutcome,
  TRACE_EVENT_TYPES,
  type TraceEventType,
  type Transition,
} from "@piw/protocol";
import { RunStore } from "@piw/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayView } from "../src/index.js";
import { manifestNode, runViewOf } from "./run-view-fixture.js";

// The store's own transitions on a real SQLite file, and after every one of them the replay of its
// trace: the replayed status, outcome and node states must be the store's. Together the runs below
// record every trace event there is.

const manifest: GraphManifest = {
  version: 1,
  workflow: "trace",
  startPath: "a",
  exits: ["done"],
  maxSteps: 50,
  nodes: [
    manifestNode("a", "agent"),
    manifestNode("b", "compute"),
    manifestNode("c", "compute"),
    manifestNode("d", "action"),
  ],
  mounts: [],
  edges: [],
};

interface Checkpoint {
  step: string;
  events: number;
  run: RunRecord;
  nodes: Array<[path: string, state: string, visits: number, attempt: number]>;
}

let dir: string;
let store: RunStore;
const clock = { now: 1_700_000_000_000 };
const checkpoints = new Map<string, Checkpoint[]>();

function saved<T>(t: Transition<T>): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value;
  throw new Error(`expected a saved transition, got ${JSON.stringify(t)}`);
}

/** What the store says about the run's nodes: the latest visit of each path, as the view shows it. */
function storeNodes(runId: string): Checkpoint["nodes"] {
  const steps = store.listRunSteps(runId);
  return manifest.nodes.map(({ path }) => {
    const visits = steps.filter((s) => s.path === path);
    const last = visits.reduce<(typeof visits)[number] | undefined>(
      (max, s) => (max === undefined || s.visit > max.visit ? s : max),
      undefined,
    );
    return [path, last?.status ?? "pending", visits.length, last?.attempt ?? 0];
  });
}

/** Run one store operation and remember the run exactly as the store then holds it. */
function step(runId: string, name: string, op: () => unknown): void {
  clock.now += 10;
  op();
  const run = store.getRun(runId);
  if (run === null) throw new Error(`run ${runId} is missing`);
  const list = checkpoints.get(runId) ?? [];
  list.push({
    step: name,
    events: store.listRunEvents(runId, 0, 10_000).length,
    run,
    nodes: storeNodes(runId),
  });
  checkpoints.set(runId, list);
}

function history(runId: string): HistoryEvent[] {
  return store.listRunEvents(runId, 0, 10_000).map(({ runId: _run, revision: _revision, ...event }) => event);
}

function prepared(runId: string, origin: { kind: "pi"; sessionId: string } | { kind: "cli" }, extra = {}) {
  return {
    runId,
    workflowName: "trace",
    source: { kind: "file" as const, path: "/tmp/trace.workflow.ts", sha256: "a".repeat(64) },
    definitionDigest: "digest-1",
    manifest,
    input: { task: "trace" },
    origin,
    ...extra,
  };
}

function claim(runId: string, token: string, leaseMs = 30_000): Fence {
  const { command } = saved(store.claimRun({ runId, claimToken: token, leaseMs }));
  return { runId, generation: command.generation, claimToken: command.claimToken };
}

/** A run whose status went queued, starting, lease expired, and on through every kind of node, effect,
 * message, turn, pause, worker loss and manual effect, to completed and presented. */
function longRun(): void {
  const id = "long-1";
  const session = "session-long";
  step(id, "reserve", () =>
    saved(store.reservePreparedRun(prepared(id, { kind: "pi", sessionId: session }))),
  );
  step(id, "claim", () => claim(id, "claim-1", 1_000));
  clock.now += 5_000;
  step(id, "lease expires", () => saved(store.recoverExpiredStarting({ runId: id })));
  let fence = claim(id, "claim-2");
  step(id, "claim again", () => fence);
  step(id, "launch", () =>
    saved(store.recordWorkerLaunch(fence, { launchId: "launch-1", commandType: "start", pid: null })),
  );
  step(id, "running", () => saved(store.markRunning(fence)));
  // A resume that accepted an edited workflow file: the same graph, a new file and digest.
  step(id, "redefined", () =>
    saved(
      store.redefineRun(fence, {
        workflowName: "trace",
        source: { kind: "file", path: "/tmp/trace.workflow.ts", sha256: "b".repeat(64) },
        definitionDigest: "digest-2",
        manifest,
      }),
    ),
  );
  step(id, "start a", () => saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "agent" })));
  const prompt = (n: number) => ({
    messageId: `msg:${id}:a:1:step_prompt:${n}`,
    kind: "step_prompt" as const,
    path: "a",
    visit: 1,
    body: `Prompt ${n}.`,
    triggerTurn: true,
  });
  step(id, "enqueue", () => saved(store.enqueueMessage(fence, prompt(1))));
  step(id, "claim messages", () =>
    saved(store.claimMessages({ sessionId: session, claimToken: "deliverer", leaseMs: 1_000 })),
  );
  step(id, "delivered", () => saved(store.markMessageDelivered({ messageId: prompt(1).messageId })));
  step(id, "turn starts", () =>
    saved(store.startTurn({ sessionId: session, requestId: "req-1", messageId: prompt(1).messageId })),
  );
  step(id, "turn ends", () =>
    saved(store.endTurn({ sessionId: session, requestId: "req-1", reason: "completed" })),
  );
  step(id, "enqueue again", () => saved(store.enqueueMessage(fence, prompt(2))));
  step(id, "second turn", () =>
    saved(store.startTurn({ sessionId: session, requestId: "req-2", messageId: prompt(2).messageId })),
  );
  step(id, "turns lost", () => saved(store.settleSessionTurns({ sessionId: session })));
  step(id, "message cancelled", () => saved(store.cancelMessage({ messageId: prompt(2).messageId })));
  const effect = (effectId: string, ordinal: number, mode: "idempotent" | "manual", path = "a") => ({
    effectId,
    path,
    visit: 1,
    effectType: "http",
    ordinal,
    mode,
    request: { url: "https://example.invalid" },
  });
  step(id, "reserve effect", () => saved(store.reserveEffect(fence, effect("e-1", 0, "idempotent"))));
  step(id, "settle effect", () =>
    saved(store.settleEffect(fence, { effectId: "e-1", result: { ok: true, value: 1 } })),
  );
  step(id, "reserve another", () => saved(store.reserveEffect(fence, effect("e-2", 1, "idempotent"))));
  step(id, "effect fails", () =>
    saved(
      store.settleEffect(fence, {
        effectId: "e-2",
        result: { ok: false, error: { code: "node_failed", message: "refused" } },
      }),
    ),
  );
  step(id, "a succeeds", () =>
    saved(
      store.finishNodeVisit(fence, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: "ok", next: "b" },
      }),
    ),
  );
  step(id, "start b", () => saved(store.startNodeVisit(fence, { path: "b", visit: 1, nodeKind: "compute" })));
  step(id, "b retried", () =>
    saved(store.startNodeVisit(fence, { path: "b", visit: 1, nodeKind: "compute" })),
  );
  step(id, "b fails", () =>
    saved(
      store.finishNodeVisit(fence, {
        path: "b",
        visit: 1,
        result: { status: "failed", error: { code: "node_failed", message: "exit 1" } },
      }),
    ),
  );
  step(id, "start c", () => saved(store.startNodeVisit(fence, { path: "c", visit: 1, nodeKind: "compute" })));
  step(id, "c times out", () =>
    saved(
      store.finishNodeVisit(fence, {
        path: "c",
        visit: 1,
        result: { status: "timed_out", error: { code: "node_timed_out", message: "too slow" } },
      }),
    ),
  );
  step(id, "pause requested", () => saved(store.requestPause({ runId: id })));
  step(id, "parks at d", () =>
    expect(store.startNodeVisit(fence, { path: "d", visit: 1, nodeKind: "action" }).kind).toBe(
      "recoveryRequired",
    ),
  );
  fence = claim(id, "claim-3");
  step(id, "resume claimed", () => fence);
  step(id, "launch resume", () =>
    saved(store.recordWorkerLaunch(fence, { launchId: "launch-2", commandType: "resume", pid: null })),
  );
  step(id, "worker lost", () =>
    saved(store.recordWorkerExit({ launchId: "launch-2", exit: { kind: "lost", detail: "killed" } })),
  );
  fence = claim(id, "claim-4");
  step(id, "claimed again", () => fence);
  step(id, "launch again", () =>
    saved(store.recordWorkerLaunch(fence, { launchId: "launch-3", commandType: "resume", pid: null })),
  );
  step(id, "running again", () => saved(store.markRunning(fence)));
  step(id, "start d", () => saved(store.startNodeVisit(fence, { path: "d", visit: 1, nodeKind: "action" })));
  step(id, "manual effect", () => saved(store.reserveEffect(fence, effect("e-3", 0, "manual", "d"))));
  step(id, "manual effect unsettled", () =>
    expect(store.reserveEffect(fence, effect("e-3", 0, "manual", "d")).kind).toBe("recoveryRequired"),
  );
  step(id, "resolved by a person", () =>
    saved(store.resolveManualEffect({ runId: id, effectId: "e-3", happened: true, value: 2 })),
  );
  step(id, "old worker exits", () =>
    saved(store.recordWorkerExit({ launchId: "launch-3", exit: { kind: "lost", detail: "gone" } })),
  );
  fence = claim(id, "claim-5");
  step(id, "resumed", () => fence);
  step(id, "running to the end", () => saved(store.markRunning(fence)));
  step(id, "d reopened", () =>
    saved(store.startNodeVisit(fence, { path: "d", visit: 1, nodeKind: "action" })),
  );
  step(id, "d succeeds", () =>
    saved(
      store.finishNodeVisit(fence, {
        path: "d",
        visit: 1,
        result: { status: "succeeded", output: null, next: null },
      }),
    ),
  );
  step(id, "completed", () => saved(store.finishRun(fence, { outcome: "completed", output: { ok: true } })));
  step(id, "presented", () => saved(store.createTerminalMessages({ runId: id })));
}

/** Runs that end every other way: waiting, failed by its worker, timed out, cancelled, requeued. */
function endings(): void {
  const cli = { kind: "cli" } as const;
  step("wait-1", "reserve", () => saved(store.reservePreparedRun(prepared("wait-1", cli))));
  const wait = claim("wait-1", "claim-w");
  step("wait-1", "claim", () => wait);
  step("wait-1", "running", () => saved(store.markRunning(wait)));
  step("wait-1", "start a", () =>
    saved(store.startNodeVisit(wait, { path: "a", visit: 1, nodeKind: "agent" })),
  );
  step("wait-1", "waiting", () =>
    saved(
      store.finishRun(wait, {
        outcome: "waiting",
        checkpoint: { path: "a", visit: 1, prompt: "Approve?" },
        answerCheck: { kind: "worker_only", reason: "refinements" },
      }),
    ),
  );
  step("wait-1", "answered", () =>
    saved(
      store.prepareContinuation({
        runId: "wait-1-answered",
        parentRunId: "wait-1",
        accepted: { answer: { approved: true } },
        answerer: "human",
      }),
    ),
  );

  // A queued run's budget raised before it ran (as `piw resume --budget` does for a parked one).
  step("budget-1", "reserve", () => saved(store.reservePreparedRun(prepared("budget-1", cli))));
  step("budget-1", "budget raised", () =>
    saved(store.raiseBudget({ runId: "budget-1", budget: { tokens: 1000 } })),
  );

  step("fail-1", "reserve", () => saved(store.reservePreparedRun(prepared("fail-1", cli))));
  const fail = claim("fail-1", "claim-f");
  step("fail-1", "claim", () => fail);
  step("fail-1", "launch", () =>
    saved(store.recordWorkerLaunch(fail, { launchId: "launch-f", commandType: "start", pid: null })),
  );
  step("fail-1", "worker reports a failure", () =>
    saved(
      store.recordWorkerExit({
        launchId: "launch-f",
        exit: {
          kind: "reported",
          phase: "bootstrap",
          error: { code: "source_changed", message: "The file changed." },
        },
      }),
    ),
  );

  step("slow-1", "reserve", () => saved(store.reservePreparedRun(prepared("slow-1", cli))));
  const slow = claim("slow-1", "claim-s");
  step("slow-1", "claim", () => slow);
  step("slow-1", "running", () => saved(store.markRunning(slow)));
  step("slow-1", "timed out", () =>
    saved(
      store.finishRun(slow, {
        outcome: "timed_out",
        error: { code: "node_timed_out", message: "too slow" },
      }),
    ),
  );

  step("cancel-1", "reserve", () => saved(store.reservePreparedRun(prepared("cancel-1", cli))));
  const cancel = claim("cancel-1", "claim-c");
  step("cancel-1", "claim", () => cancel);
  step("cancel-1", "launch", () =>
    saved(store.recordWorkerLaunch(cancel, { launchId: "launch-c", commandType: "start", pid: null })),
  );
  step("cancel-1", "cancelled", () => saved(store.cancelRun({ runId: "cancel-1" })));
  step("cancel-1", "worker exits after", () =>
    saved(store.recordWorkerExit({ launchId: "launch-c", exit: { kind: "lost", detail: "stopped" } })),
  );

  step("requeue-1", "reserve", () => saved(store.reservePreparedRun(prepared("requeue-1", cli))));
  const requeue = claim("requeue-1", "claim-r");
  step("requeue-1", "claim", () => requeue);
  step("requeue-1", "launch", () =>
    saved(store.recordWorkerLaunch(requeue, { launchId: "launch-r", commandType: "start", pid: null })),
  );
  step("requeue-1", "host died with the worker", () =>
    saved(store.recordWorkerExit({ launchId: "launch-r", exit: { kind: "orphaned", detail: "host gone" } })),
  );
}

/** A completed run whose presentation does not fit the store's blob limit: recorded for repair. */
function presentationFailure(): void {
  const id = "present-1";
  const origin = { kind: "pi", sessionId: "session-present" } as const;
  step(id, "reserve", () =>
    saved(store.reservePreparedRun(prepared(id, origin, { presentationInstructions: "Summarise it." }))),
  );
  const fence = claim(id, "claim-p");
  step(id, "claim", () => fence);
  step(id, "running", () => saved(store.markRunning(fence)));
  // Small as saved JSON, too big once pretty-printed into the presentation message.
  const output = Array.from({ length: 600 }, () => 0);
  step(id, "completed", () => saved(store.finishRun(fence, { outcome: "completed", output })));
  step(id, "presentation fails", () =>
    expect(store.createTerminalMessages({ runId: id }).kind).toBe("conflict"),
  );
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-replay-"));
  store = RunStore.open({ stateDir: join(dir, "state"), now: () => clock.now, maxBlobBytes: 2_048 });
  longRun();
  endings();
  presentationFailure();
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

describe("replay against the store", () => {
  it("replays each run to the store's status, outcome and node states after every transition", () => {
    for (const [runId, list] of checkpoints) {
      const events = history(runId);
      const view = runViewOf(manifest, { runId });
      for (const point of list) {
        const replayed = replayView(view, { ...emptyHistory(runId), events }, point.events - 1);
        const label = `${runId} after ${point.step} (${events[point.events - 1]?.type})`;
        expect({ status: replayed.status, outcome: replayed.outcome }, label).toEqual({
          status: point.run.status,
          outcome: runOutcome(point.run),
        });
        expect(
          replayed.nodes.map((n) => [n.path, n.state, n.visits, n.attempt]),
          label,
        ).toEqual(point.nodes);
      }
    }
  });

  it("shows a run whose claim expired as queued, as the store has it", () => {
    const point = checkpoints.get("long-1")?.find((p) => p.step === "lease expires");
    expect(point?.run.status).toBe("queued");
    const events = history("long-1");
    expect(events[(point?.events ?? 0) - 1]?.type).toBe("run.lease_expired");
    const view = runViewOf(manifest, { runId: "long-1" });
    expect(replayView(view, { ...emptyHistory("long-1"), events }, (point?.events ?? 0) - 1).status).toBe(
      "queued",
    );
  });

  it("saved only events the wire schema accepts, exactly as saved", () => {
    for (const runId of checkpoints.keys()) {
      for (const event of history(runId)) expect(historyEventSchema.parse(event)).toEqual(event);
    }
  });

  it("has recorded every trace event kind, so each replay rule was checked against the store", () => {
    const seen = new Set<TraceEventType>();
    for (const runId of checkpoints.keys()) for (const event of history(runId)) seen.add(event.type);
    expect([...TRACE_EVENT_TYPES].filter((type) => !seen.has(type))).toEqual([]);
  });
});

function emptyHistory(runId: string) {
  return {
    runId,
    revision: 0,
    events: [],
    eventsOmitted: 0,
    steps: [],
    effects: [],
    messages: [],
    turns: [],
  };
}
