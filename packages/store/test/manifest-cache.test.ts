import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrozenJsonCache } from "../src/frozen-json-cache.js";
import { openHarness, runningRun, type StoreHarness } from "./fixtures.js";

// Views read a run's manifest many times a second: the store hands out one frozen value per manifest.

let h: StoreHarness;
const cli = { kind: "cli" } as const;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

describe("readRunManifest", () => {
  it("returns one frozen value per manifest, shared by every read", () => {
    runningRun(h.store, "run-a", { manifest: { nodes: ["a", "b"] }, origin: cli });
    runningRun(h.store, "run-b", { manifest: { nodes: ["a", "b"] }, origin: cli });
    runningRun(h.store, "run-c", { manifest: { nodes: ["c"] }, origin: cli });
    const a = h.store.readRunManifest("run-a");
    expect(a).toEqual({ nodes: ["a", "b"] });
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a as { nodes: string[] }).nodes)).toBe(true);
    expect(h.store.readRunManifest("run-a")).toBe(a);
    // The same content is the same blob: one value for both runs.
    expect(h.store.readRunManifest("run-b")).toBe(a);
    expect(h.store.readRunManifest("run-c")).toEqual({ nodes: ["c"] });
  });
});

describe("FrozenJsonCache", () => {
  it("keeps values up to its length, dropping the least recently used first", () => {
    const reads: string[] = [];
    const cache = new FrozenJsonCache(20);
    const get = (hash: string, text: string) =>
      cache.get(hash, () => {
        reads.push(hash);
        return text;
      });
    const a = get("a", '{"n":"aaaa"}'); // 12 code units
    expect(get("a", "unused")).toBe(a);
    get("b", '["bb"]'); // 6: 18 in all
    get("a", "unused"); // a is now the most recently used
    get("c", '"cccc"'); // 6: 24 > 20, so b goes
    expect(get("a", "unused")).toBe(a);
    expect(get("c", "unused")).toBe("cccc");
    expect(get("b", '["bb"]')).toEqual(["bb"]);
    expect(reads).toEqual(["a", "b", "c", "b"]);
  });

  it("does not keep a value longer than the whole cache", () => {
    const cache = new FrozenJsonCache(4);
    const big = cache.get("big", () => '"too long"');
    expect(big).toBe("too long");
    expect(cache.get("big", () => '"read again"')).toBe("read again");
  });
});
