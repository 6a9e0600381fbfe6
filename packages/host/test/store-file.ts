import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Fence, JsonValue, RunOrigin } from "@piw/protocol";
import { type OpenStoreOptions, RunStore } from "@piw/store";
import { removeTree } from "@piw/test-kit";

// For host tests that drive the store directly, as a worker would, and read what the host builds
// from it: a real SQLite file in a temp folder, and a run that is running.

export interface StoreFile {
  store: RunStore;
  /** The folder of the state dir, to open the same file again. */
  dir: string;
  open(extra?: Partial<OpenStoreOptions>): RunStore;
  /** Close the store and remove the folder. */
  cleanup(): void;
}

export function storeFile(prefix: string): StoreFile {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const open = (extra: Partial<OpenStoreOptions> = {}) =>
    RunStore.open({ stateDir: join(dir, "state"), ...extra });
  const file: StoreFile = {
    store: open(),
    dir,
    open,
    cleanup: () => {
      file.store.close();
      removeTree(dir);
    },
  };
  return file;
}

/** The value of an applied or adopted transition; anything else fails the test with what it was. */
export function saved<T>(result: { kind: string; value?: T }): T {
  if (result.kind !== "applied" && result.kind !== "adopted") {
    throw new Error(`expected a saved transition, got ${JSON.stringify(result)}`);
  }
  return result.value as T;
}

export interface RunningRunOptions {
  workflowName?: string;
  origin?: RunOrigin;
  manifest?: JsonValue;
}

/** A run reserved, claimed and marked running, as its worker's fence sees it. */
export function runningRun(store: RunStore, runId: string, options: RunningRunOptions = {}): Fence {
  const workflowName = options.workflowName ?? "demo";
  saved(
    store.reservePreparedRun({
      runId,
      workflowName,
      source: { kind: "file", path: `/tmp/${workflowName}.workflow.ts`, sha256: "a".repeat(64) },
      definitionDigest: "digest-1",
      manifest: options.manifest ?? { nodes: [] },
      input: null,
      origin: options.origin ?? { kind: "cli" },
    }),
  );
  const claimToken = `claim-${runId}`;
  const claim = saved(store.claimRun({ runId, claimToken, leaseMs: 30_000 }));
  const fence = { runId, generation: claim.command.generation, claimToken };
  saved(store.markRunning(fence));
  return fence;
}
