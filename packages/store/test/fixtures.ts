import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Fence, ReservePreparedRun, Transition } from "@piw/protocol";
import { type OpenStoreOptions, RunStore } from "../src/index.js";

/** A real state directory in a temp folder, and a clock the test moves by hand. */
export interface StoreHarness {
  dir: string;
  store: RunStore;
  clock: { now: number };
  reopen(options?: Partial<OpenStoreOptions>): RunStore;
  cleanup(): void;
}

export function openHarness(options: Partial<OpenStoreOptions> = {}): StoreHarness {
  const dir = mkdtempSync(join(tmpdir(), "piw-store-"));
  const clock = { now: 1_700_000_000_000 };
  const stateDir = join(dir, "state");
  const open = (extra: Partial<OpenStoreOptions> = {}) =>
    RunStore.open({ stateDir, now: () => clock.now, ...options, ...extra });
  const harness: StoreHarness = {
    dir: stateDir,
    store: open(),
    clock,
    reopen(extra) {
      harness.store.close();
      harness.store = open(extra);
      return harness.store;
    },
    cleanup() {
      harness.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

export function preparedRun(runId: string, overrides: Partial<ReservePreparedRun> = {}): ReservePreparedRun {
  return {
    runId,
    workflowName: "demo",
    source: { kind: "file", path: "/tmp/demo.workflow.ts", sha256: "a".repeat(64) },
    definitionDigest: "digest-1",
    manifest: { nodes: ["a", "b"] },
    input: { task: "say hi" },
    origin: { kind: "pi", sessionId: "session-1" },
    ...overrides,
  };
}

/** The value of an applied or adopted transition; anything else fails the test with its evidence. */
export function saved<T>(t: Transition<T>): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value;
  throw new Error(`expected a saved transition, got ${JSON.stringify(t)}`);
}

/** Reserve, claim and mark a run running; returns the worker's fence. */
export function runningRun(
  store: RunStore,
  runId: string,
  overrides: Partial<ReservePreparedRun> = {},
): Fence {
  saved(store.reservePreparedRun(preparedRun(runId, overrides)));
  const claim = saved(store.claimRun({ runId, claimToken: `claim-${runId}`, leaseMs: 30_000 }));
  const fence = { runId, generation: claim.command.generation, claimToken: claim.command.claimToken };
  saved(store.markRunning(fence));
  return fence;
}
