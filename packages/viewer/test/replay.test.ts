import type { GraphManifest } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { describeEvent, historyAt, replayView, stepReplay } from "../src/index.js";
import { event, historyOf } from "./history-fixture.js";
import { manifestNode, runViewOf, withNode } from "./run-view-fixture.js";

const loop: GraphManifest = {
  version: 1,
  workflow: "loop",
  startPath: "draft",
  exits: ["done"],
  maxSteps: 20,
  nodes: [manifestNode("draft", "agent"), manifestNode("route", "decision")],
  mounts: [],
  edges: [
    { from: "draft", to: { kind: "node", path: "route" } },
    { from: "route", to: { kind: "node", path: "draft" }, label: "revise" },
    { from: "route", to: { kind: "exit", exit: "done" }, label: "accept" },
  ],
};

const events = [
  event({ type: "run.queued", data: { command: "start" } }),
  event({ type: "run.claimed", data: { from: "queued", generation: 0 } }),
  event({ type: "run.running" }),
  event({ type: "node.started", path: "draft", visit: 1, data: { kind: "agent" } }),
  event({ type: "node.succeeded", path: "draft", visit: 1 }),
  event({ type: "node.started", path: "route", visit: 1, data: { kind: "decision" } }),
  event({ type: "node.succeeded", path: "route", visit: 1 }),
  event({ type: "node.started", path: "draft", visit: 2, data: { kind: "agent" } }),
  event({ type: "node.retried", path: "draft", visit: 2, data: { attempt: 2 } }),
  event({ type: "node.failed", path: "draft", visit: 2, data: { code: "node_failed" } }),
  event({ type: "run.failed", data: { code: "node_failed" } }),
];
const history = historyOf("run_01", events);
let live = runViewOf(loop, {
  status: "failed",
  outcome: "failed",
  error: { code: "node_failed", message: "boom" },
});
live = withNode(live, "draft", {
  state: "failed",
  visits: 2,
  attempt: 2,
  startedAt: 1,
  finishedAt: 2,
  errorCode: "node_failed",
});
live = withNode(live, "route", { state: "succeeded", visits: 1, attempt: 1, startedAt: 1, finishedAt: 2 });

describe("replayView", () => {
  it("re-derives every node and the run from the events up to the point", () => {
    const early = replayView(live, history, 3);
    expect(early.status).toBe("running");
    expect(early.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["draft", "running", 1],
      ["route", "pending", 0],
    ]);
    expect(early.cursor).toEqual({ path: "draft", visit: 1 });
    expect(early.currentWork).toEqual({ kind: "none" });
    expect(early.error).toBeNull();

    const looped = replayView(live, history, 8);
    const draft = looped.nodes.find((n) => n.path === "draft");
    expect(draft).toMatchObject({ state: "running", visits: 2, attempt: 2, finishedAt: null });
    expect(looped.nodes.find((n) => n.path === "route")).toMatchObject({ state: "succeeded", visits: 1 });
  });

  it("ends where the live view is", () => {
    const end = replayView(live, history, events.length - 1);
    expect(end.status).toBe("failed");
    expect(end.outcome).toBe("failed");
    expect(end.error).toEqual(live.error);
    expect(end.nodes.map((n) => [n.path, n.state, n.visits, n.attempt, n.errorCode])).toEqual(
      live.nodes.map((n) => [n.path, n.state, n.visits, n.attempt, n.errorCode]),
    );
  });

  it("clamps positions outside the timeline", () => {
    expect(replayView(live, history, -5).status).toBe("queued");
    expect(replayView(live, history, 500).status).toBe("failed");
  });
});

describe("stepReplay", () => {
  it("steps back from live, forward again, and snaps to live at the end", () => {
    expect(stepReplay(null, -1, 10)).toBe(8);
    expect(stepReplay(8, -1, 10)).toBe(7);
    expect(stepReplay(7, 1, 10)).toBe(8);
    expect(stepReplay(8, 1, 10)).toBeNull();
    expect(stepReplay(0, -1, 10)).toBe(0);
    expect(stepReplay(null, 1, 10)).toBeNull();
    expect(stepReplay(null, -1, 0)).toBeNull();
    expect(stepReplay(null, -1, 1)).toBeNull();
  });

  it("names an event by type, path and visit", () => {
    expect(describeEvent(events[4] as (typeof events)[number])).toBe("node.succeeded draft #1");
    expect(describeEvent(events[0] as (typeof events)[number])).toBe("run.queued");
  });
});

describe("historyAt", () => {
  it("keeps only what had happened by the replay point, later endings still under way", () => {
    const full = historyOf("run_01", events, {
      steps: [
        {
          path: "draft",
          visit: 1,
          attempt: 1,
          status: "succeeded",
          startedAt: events[3]?.at ?? 0,
          finishedAt: events[4]?.at ?? 0,
          errorCode: null,
          error: null,
          output: "v1",
        },
        {
          path: "route",
          visit: 1,
          attempt: 1,
          status: "succeeded",
          startedAt: events[5]?.at ?? 0,
          finishedAt: events[6]?.at ?? 0,
          errorCode: null,
          error: null,
          output: "revise",
        },
      ],
      effects: [
        {
          effectId: "e",
          path: "draft",
          visit: 1,
          effectType: "http",
          ordinal: 0,
          mode: "idempotent",
          status: "settled",
          request: {},
          result: 1,
          errorCode: null,
          error: null,
          reservedAt: events[3]?.at ?? 0,
          settledAt: events[4]?.at ?? 0,
        },
      ],
    });
    const during = historyAt(full, 3);
    expect(during.events).toHaveLength(4);
    expect(during.steps).toEqual([
      expect.objectContaining({ path: "draft", status: "running", output: null, finishedAt: null }),
    ]);
    expect(during.effects).toEqual([expect.objectContaining({ status: "reserved", result: null })]);
    const after = historyAt(full, 6);
    expect(after.steps.map((step) => [step.path, step.status, step.output])).toEqual([
      ["draft", "succeeded", "v1"],
      ["route", "succeeded", "revise"],
    ]);
  });

  it("shows a visit open at a cancel as running before the cancel and cancelled from it on", () => {
    const cancelled = [
      event({ type: "run.queued", data: { command: "start" } }),
      event({ type: "run.running" }),
      event({ type: "node.started", path: "draft", visit: 1, data: { kind: "agent" } }),
      event({ type: "run.cancelled" }),
    ];
    const full = historyOf("run_02", cancelled, {
      steps: [
        {
          path: "draft",
          visit: 1,
          attempt: 1,
          status: "cancelled",
          startedAt: cancelled[2]?.at ?? 0,
          finishedAt: null,
          errorCode: null,
          error: null,
          output: null,
        },
      ],
    });
    expect(historyAt(full, 2).steps.map((step) => step.status)).toEqual(["running"]);
    expect(historyAt(full, 3).steps.map((step) => step.status)).toEqual(["cancelled"]);
  });

  it("shows a visit open when its run failed as running before the failure and pending from it on", () => {
    const failed = [
      event({ type: "run.queued", data: { command: "start" } }),
      event({ type: "run.running" }),
      event({ type: "node.started", path: "draft", visit: 1, data: { kind: "agent" } }),
      event({ type: "run.failed", data: { code: "node_failed" } }),
    ];
    const full = historyOf("run_03", failed, {
      steps: [
        {
          path: "draft",
          visit: 1,
          attempt: 1,
          status: "pending",
          startedAt: failed[2]?.at ?? 0,
          finishedAt: null,
          errorCode: null,
          error: null,
          output: null,
        },
      ],
    });
    expect(historyAt(full, 2).steps.map((step) => step.status)).toEqual(["running"]);
    expect(historyAt(full, 3).steps.map((step) => step.status)).toEqual(["pending"]);
  });
});
