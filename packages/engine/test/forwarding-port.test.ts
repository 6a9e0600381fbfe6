import type { RecoveryReason } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { branchPort } from "../src/executor/branch-port.js";
import { forwardingPort, RUN_PORT_METHODS } from "../src/executor/forwarding-port.js";
import type { RunPort } from "../src/executor/run-port.js";

/** A port that answers every call with one saved transition and notes the method's name. */
function recordingPort(calls: string[]): RunPort {
  const saved = { kind: "applied", value: { started: { kind: "applied" } } };
  return new Proxy({} as RunPort, {
    get: (_target, name) => () => {
      calls.push(String(name));
      return name === "reportProgress" ? undefined : Promise.resolve(saved);
    },
  });
}

const lost: RecoveryReason = { code: "worker_lost", message: "lost", launchId: "launch-1" };
const waiting: RecoveryReason = { code: "waiting", message: "waiting", path: "fan/a/a", visit: 1, until: 5 };
const visit = { path: "fan/a/a", visit: 1 };
const start = { ...visit, nodeKind: "compute" as const };
const finish = { ...visit, result: { status: "succeeded" as const, output: 1, next: null } };

/** One call of each method of the port: a method added to RunPort does not compile until it is here. */
const CALLS: { [K in keyof RunPort]-?: (port: RunPort) => unknown } = {
  readRun: (p) => p.readRun(),
  markRunning: (p) => p.markRunning(),
  loadSnapshot: (p) => p.loadSnapshot(),
  startNodeVisit: (p) => p.startNodeVisit(start),
  finishNodeVisit: (p) => p.finishNodeVisit(finish),
  advanceNodeVisit: (p) => p.advanceNodeVisit({ finish, start }),
  reserveEffect: (p) =>
    p.reserveEffect({
      ...visit,
      effectId: "e",
      effectType: "t",
      ordinal: 0,
      mode: "idempotent",
      request: {},
    }),
  settleEffect: (p) => p.settleEffect({ effectId: "e", result: { ok: true, value: 1 } }),
  enqueueMessage: (p) =>
    p.enqueueMessage({ ...visit, messageId: "m", kind: "notify", body: "b", triggerTurn: false }),
  finishRun: (p) => p.finishRun({ outcome: "completed", output: 1 }),
  parkRun: (p) => p.parkRun(lost),
  checkBudget: (p) => p.checkBudget({ ...visit, when: "before_turn", pending: {} }),
  scheduleVisit: (p) => p.scheduleVisit(waiting),
  redefineRun: (p) =>
    p.redefineRun({
      workflowName: "w",
      source: { kind: "builtin", id: "w", revision: "1" },
      definitionDigest: "d",
      manifest: {},
    }),
  reportProgress: (p) =>
    p.reportProgress({ ...visit, attempt: 1, state: { done: 1, total: 2, message: null } }),
  nextAgentEvent: (p) => p.nextAgentEvent(visit, new AbortController().signal),
};
const METHODS = Object.keys(CALLS) as Array<keyof RunPort>;

it("names every method of the port once", () => {
  expect([...RUN_PORT_METHODS].sort()).toEqual([...METHODS].sort());
});

async function callEach(port: RunPort): Promise<void> {
  for (const method of METHODS) await CALLS[method](port);
}

describe("forwardingPort", () => {
  it("forwards every method of the port to the inner port", async () => {
    const calls: string[] = [];
    await callEach(forwardingPort(recordingPort(calls), {}));
    expect(calls).toEqual(METHODS);
  });

  it("calls what it intercepts instead, and forwards the rest", async () => {
    const calls: string[] = [];
    const inner = recordingPort(calls);
    const port = forwardingPort(inner, {
      scheduleVisit: (reason) => {
        calls.push("intercepted");
        return inner.scheduleVisit(reason);
      },
    });
    await port.scheduleVisit(waiting);
    await port.readRun();
    expect(calls).toEqual(["intercepted", "scheduleVisit", "readRun"]);
  });
});

describe("a branch's port", () => {
  it("forwards every method to its parent, a clock's schedule included; its parks go to the fork", async () => {
    const calls: string[] = [];
    const parks: RecoveryReason[] = [];
    const port = branchPort(
      recordingPort(calls),
      async (reason) => {
        parks.push(reason);
        return { kind: "applied", value: { runId: "r" } } as never;
      },
      () => {},
    );
    await callEach(port);
    // `parkRun` forwards a reason the fork does not take (a lost worker); a wait's park goes to the fork.
    expect(calls).toEqual(METHODS);
    await port.parkRun(waiting);
    expect(parks).toEqual([waiting]);
    expect(calls).toEqual(METHODS);
  });
});
