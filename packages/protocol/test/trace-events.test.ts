import { describe, expect, it } from "vitest";
import { historyEventSchema, TRACE_EVENT_TYPES, traceEventSchema } from "../src/index.js";

describe("the trace-event vocabulary", () => {
  it("names each event once, with dotted stable names", () => {
    expect(new Set(TRACE_EVENT_TYPES).size).toBe(TRACE_EVENT_TYPES.length);
    for (const type of TRACE_EVENT_TYPES)
      expect(type).toMatch(/^(run|node|effect|message|turn|worker)\.[a-z_]+$/);
    expect(TRACE_EVENT_TYPES).toContain("run.lease_expired");
  });

  it("fills a run-wide event's place and an empty payload with null", () => {
    expect(traceEventSchema.parse({ type: "run.running" })).toEqual({
      type: "run.running",
      path: null,
      visit: null,
      data: null,
    });
    expect(traceEventSchema.parse({ type: "node.succeeded", path: "a/b", visit: 2 })).toEqual({
      type: "node.succeeded",
      path: "a/b",
      visit: 2,
      data: null,
    });
  });

  it("refuses unknown names, missing places and payloads of the wrong shape", () => {
    const refused = [
      { type: "run.made_up" },
      { type: "node.started", data: { kind: "agent" } },
      { type: "node.started", path: "a", visit: 1, data: { kind: "robot" } },
      { type: "node.retried", path: "a", visit: 1, data: { attempt: "2" } },
      { type: "run.parked", data: { reason: "bored" } },
      { type: "run.running", path: "a", visit: 1 },
      { type: "run.failed", data: { code: "not_a_code" } },
      { type: "worker.exited", data: { launchId: "l-1", decision: "maybe" } },
    ];
    for (const event of refused)
      expect(traceEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(false);
  });

  it("carries a history entry's position and time beside the event on the wire", () => {
    const entry = {
      seq: 3,
      at: 1_000,
      type: "run.queued",
      path: null,
      visit: null,
      data: { command: "start" },
    };
    expect(historyEventSchema.parse(entry)).toEqual(entry);
    expect(historyEventSchema.safeParse({ ...entry, seq: undefined }).success).toBe(false);
  });
});
