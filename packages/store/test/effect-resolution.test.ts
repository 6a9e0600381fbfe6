import { type Fence, resolveManualEffectSchema } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  claimRunning,
  crashAndRelaunch,
  effectIdFor,
  expectRefusedBySchema,
  openHarness,
  runningRun,
  type StoreHarness,
  saved,
} from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUN = "resolve-1";

function manualReq(fence: Fence) {
  return {
    effectId: effectIdFor(fence.runId, "deploy", 1, "send_invoice"),
    path: "deploy",
    visit: 1,
    effectType: "send_invoice",
    ordinal: 0,
    mode: "manual" as const,
    request: { customer: 7 },
  };
}

/** A run parked at a manual effect that a crash left reserved but unsettled. */
function parkedAtManualEffect(): { effectId: string; fence: Fence } {
  const first = runningRun(h.store, RUN);
  saved(h.store.startNodeVisit(first, { path: "deploy", visit: 1, nodeKind: "action" }));
  saved(h.store.reserveEffect(first, manualReq(first)));
  const second = crashAndRelaunch(h.store, first, "claim-2");
  saved(h.store.startNodeVisit(second, { path: "deploy", visit: 1, nodeKind: "action" }));
  expect(h.store.reserveEffect(second, manualReq(second)).kind).toBe("recoveryRequired");
  return { effectId: manualReq(second).effectId, fence: second };
}

describe("resolveManualEffect", () => {
  it("settles the effect with the value a person gives; the resumed run adopts it instead of performing it", () => {
    const { effectId } = parkedAtManualEffect();
    const resolved = h.store.resolveManualEffect({
      runId: RUN,
      effectId,
      happened: true,
      value: { invoice: 12 },
    });
    expect(resolved).toMatchObject({
      kind: "applied",
      value: { status: "parked", paused: true, recoveryReason: { code: "paused" } },
    });
    expect(h.store.listRunEvents(RUN).at(-1)).toMatchObject({
      type: "effect.resolved",
      data: { effectId, happened: true },
    });
    const third = claimRunning(h.store, RUN, "claim-3");
    saved(h.store.startNodeVisit(third, { path: "deploy", visit: 1, nodeKind: "action" }));
    expect(h.store.reserveEffect(third, manualReq(third))).toEqual({
      kind: "adopted",
      value: { status: "settled", effectId, result: { ok: true, value: { invoice: 12 } } },
    });
  });

  it("drops the reservation when the effect did not happen, so the resumed run performs it", () => {
    const { effectId } = parkedAtManualEffect();
    saved(h.store.resolveManualEffect({ runId: RUN, effectId, happened: false }));
    expect(h.store.listRunEffects(RUN)).toEqual([]);
    const third = claimRunning(h.store, RUN, "claim-3");
    saved(h.store.startNodeVisit(third, { path: "deploy", visit: 1, nodeKind: "action" }));
    expect(h.store.reserveEffect(third, manualReq(third))).toEqual({
      kind: "applied",
      value: { status: "reserved", effectId },
    });
  });

  it("refuses a run that is not parked at that effect, and changes nothing", () => {
    const { effectId } = parkedAtManualEffect();
    const before = h.store.getRun(RUN);
    expect(
      h.store.resolveManualEffect({ runId: RUN, effectId: `${effectId}-other`, happened: false }),
    ).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "effect", id: `${effectId}-other` },
    });
    expect(h.store.resolveManualEffect({ runId: "nope", effectId, happened: false })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "run" },
    });
    expect(h.store.getRun(RUN)).toEqual(before);

    saved(h.store.resolveManualEffect({ runId: RUN, effectId, happened: false }));
    // Once answered, the run is parked only for the resume: a second answer is refused.
    expect(h.store.resolveManualEffect({ runId: RUN, effectId, happened: true, value: 1 })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "run", actual: "parked (paused)" },
    });
  });

  it("leaves a malformed resolution to the protocol schema, which refuses it before the store", () => {
    expectRefusedBySchema(resolveManualEffectSchema, { runId: RUN, effectId: "e", happened: true });
  });
});
