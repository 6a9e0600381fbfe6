import { effectRequestText, manualEffectUnsettled, PAUSED_AT_NODE_BOUNDARY } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { MemoryRunPort } from "../src/index.js";

// The in-memory port applies the store's own rule functions (@piw/protocol effect-rules), so a test
// against it sees what a durable run would see.

async function running(): Promise<MemoryRunPort> {
  const port = new MemoryRunPort({ runId: "mem-1" });
  expect((await port.markRunning()).kind).toBe("applied");
  await port.startNodeVisit({ path: "deploy", visit: 1, nodeKind: "action" });
  return port;
}

const reservation = (request: unknown, mode: "idempotent" | "manual" = "idempotent") => ({
  effectId: "mem-1/deploy#1/push/0",
  path: "deploy",
  visit: 1,
  effectType: "push",
  ordinal: 0,
  mode,
  request: request as never,
});

describe("MemoryRunPort", () => {
  it("compares effect requests like the store: key order does not matter, another request conflicts", async () => {
    const port = await running();
    expect((await port.reserveEffect(reservation({ a: 1, b: 2 }))).kind).toBe("applied");
    expect((await port.reserveEffect(reservation({ b: 2, a: 1 }))).kind).toBe("adopted");
    expect(await port.reserveEffect(reservation({ a: 1, b: 3 }))).toEqual({
      kind: "conflict",
      evidence: { kind: "request_mismatch", resource: "effect", id: "mem-1/deploy#1/push/0" },
    });
    expect(effectRequestText(reservation({ b: 2, a: 1 }))).toBe(
      effectRequestText(reservation({ a: 1, b: 2 })),
    );
  });

  it("adopts a repeated settle with the same result and refuses another result", async () => {
    const port = await running();
    await port.reserveEffect(reservation({ a: 1 }));
    const settle = { effectId: "mem-1/deploy#1/push/0", result: { ok: true as const, value: { sha: "1" } } };
    expect((await port.settleEffect(settle)).kind).toBe("applied");
    expect((await port.settleEffect(settle)).kind).toBe("adopted");
    expect(
      (await port.settleEffect({ ...settle, result: { ok: true as const, value: { sha: "2" } } })).kind,
    ).toBe("conflict");
  });

  it("parks with the store's reasons: an unsettled manual effect, a pause at a node boundary", async () => {
    const port = await running();
    await port.reserveEffect(reservation({ a: 1 }, "manual"));
    const again = await port.reserveEffect(reservation({ a: 1 }, "manual"));
    expect(again).toEqual({
      kind: "recoveryRequired",
      reason: manualEffectUnsettled("push", "mem-1/deploy#1/push/0"),
    });
    expect(port.status).toBe("parked");

    const paused = await running();
    paused.pauseRequested = true;
    expect(await paused.startNodeVisit({ path: "next", visit: 1, nodeKind: "compute" })).toEqual({
      kind: "recoveryRequired",
      reason: PAUSED_AT_NODE_BOUNDARY,
    });
  });
});
