import type { Fence, JsonValue } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { effectIdFor, openHarness, runningRun, type StoreHarness, saved } from "./fixtures.js";

let h: StoreHarness;
afterEach(() => h.cleanup());

/** Opens `path`'s visit and reserves its `type` effect; settles it with `value` unless undefined. */
function effect(fence: Fence, path: string, visit: number, type: string, value?: JsonValue): void {
  const effectId = effectIdFor(fence.runId, path, visit, type);
  const request = { path, visit, mode: "idempotent", request: null, effectType: type, ordinal: 0 } as const;
  saved(h.store.reserveEffect(fence, { ...request, effectId }));
  if (value !== undefined) saved(h.store.settleEffect(fence, { effectId, result: { ok: true, value } }));
}

describe("the lengths of saved lists", () => {
  it("counts each settled effect's array of the type asked for, by path and visit, and nothing else", () => {
    h = openHarness();
    const fence = runningRun(h.store, "m-1");
    for (const path of ["fan", "fan/0/inner", "other", "open", "note", "failed"]) {
      saved(h.store.startNodeVisit(fence, { path, visit: 1, nodeKind: "map" }));
    }
    effect(fence, "fan", 1, "map.items", ["a", { b: [1, 2] }, null, 3, "e"]);
    effect(fence, "fan/0/inner", 1, "map.items", []);
    effect(fence, "other", 1, "map.items", { not: "a list" });
    effect(fence, "open", 1, "map.items");
    effect(fence, "note", 1, "note", [1, 2, 3]);
    const failedId = effectIdFor("m-1", "failed", 1, "map.items");
    const base = { path: "failed", visit: 1, mode: "idempotent", request: null, ordinal: 0 } as const;
    saved(h.store.reserveEffect(fence, { ...base, effectType: "map.items", effectId: failedId }));
    const error = { code: "map_items_invalid", message: "not an array" } as const;
    saved(h.store.settleEffect(fence, { effectId: failedId, result: { ok: false, error } }));

    expect(h.store.listEffectListLengths("m-1", "map.items")).toEqual([
      { path: "fan", visit: 1, length: 5 },
      { path: "fan/0/inner", visit: 1, length: 0 },
    ]);
    expect(h.store.listEffectListLengths("m-1", "note")).toEqual([{ path: "note", visit: 1, length: 3 }]);
    expect(h.store.listEffectListLengths("no-such-run", "map.items")).toEqual([]);
  });
});
