import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

  it("still reads every manifest when more runs are viewed than it keeps", () => {
    for (let i = 0; i < 100; i++)
      runningRun(h.store, `run-${i}`, { manifest: { nodes: [`n${i}`] }, origin: cli });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 100; i++) expect(h.store.readRunManifest(`run-${i}`)).toEqual({ nodes: [`n${i}`] });
    }
  });
});
